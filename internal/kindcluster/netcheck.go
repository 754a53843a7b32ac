package kindcluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Each check runs in a namespace of its own, named from this prefix and
// labelled netcheckLabel: recreating one name at once after deleting it
// races the API server's admission, which can still see the old namespace
// terminating and refuse the new one's pods.
const (
	netcheckPrefix = "evictkit-netcheck-"
	netcheckLabel  = "evictkit-netcheck"
)

// checkNetwork proves the pod network: a server pod on one node, a Service
// in front of it, and a client pod on another node (the same node in a
// one-node cluster) that must reach the server by pod IP, by ClusterIP and
// by the Service's DNS name. The namespace is removed afterwards.
func checkNetwork(ctx context.Context, s *session, c kubernetes.Interface) error {
	image, archive, err := WorkloadImage(s.opts.Root)
	if err != nil {
		return err
	}
	if err := s.loadImage(image, archive); err != nil {
		return err
	}
	server, client, err := netcheckNodes(ctx, c)
	if err != nil {
		return err
	}
	if err := deleteNetcheckLeftovers(ctx, c); err != nil {
		return err
	}
	created, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: netcheckPrefix, Labels: map[string]string{netcheckLabel: "true"}}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	netcheckNamespace := created.Name
	defer func() {
		if err := deleteNamespace(context.WithoutCancel(ctx), c, netcheckNamespace); err != nil {
			s.progress.note("removing namespace %s: %v", netcheckNamespace, err)
		}
	}()

	// The controller-manager gives a new namespace its default service
	// account asynchronously (seconds after a restart of the engine), and
	// pods are refused until it exists.
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = c.CoreV1().ServiceAccounts(netcheckNamespace).Get(ctx, "default", metav1.GetOptions{})
		return last == nil, nil
	}); err != nil {
		return fmt.Errorf("namespace %s has no default service account within 2m: %v", netcheckNamespace, last)
	}

	pods := c.CoreV1().Pods(netcheckNamespace)
	labels := map[string]string{"app": "netcheck"}
	srv, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "server", Labels: labels},
		Spec: corev1.PodSpec{
			NodeName: server,
			Containers: []corev1.Container{{
				Name: "serve", Image: image, ImagePullPolicy: corev1.PullNever,
				Args:  []string{"serve", "-addr", ":8080"},
				Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1,
				},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	svc, err := c.CoreV1().Services(netcheckNamespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "netcheck"},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if srv, err = waitPod(ctx, c, netcheckNamespace, srv.Name, 2*time.Minute, func(p *corev1.Pod) bool { return podReady(p) }); err != nil {
		return fmt.Errorf("server pod on %s not Ready: %w", server, err)
	}
	urls := []string{
		fmt.Sprintf("http://%s:8080/", srv.Status.PodIP),
		fmt.Sprintf("http://%s/", svc.Spec.ClusterIP),
		fmt.Sprintf("http://netcheck.%s.svc.cluster.local/", netcheckNamespace),
	}
	cl, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "client"},
		Spec: corev1.PodSpec{
			NodeName:      client,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "fetch", Image: image, ImagePullPolicy: corev1.PullNever,
				Args: append([]string{"fetch", "-timeout", "60s"}, urls...),
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	done := func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	}
	if cl, err = waitPod(ctx, c, netcheckNamespace, cl.Name, 3*time.Minute, done); err != nil {
		return fmt.Errorf("client pod on %s did not finish: %w", client, err)
	}
	logs, lerr := pods.GetLogs(cl.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	for _, line := range strings.Split(strings.TrimSpace(string(logs)), "\n") {
		s.progress.note("%s -> %s: %s", client, server, line)
	}
	if cl.Status.Phase != corev1.PodSucceeded {
		return fmt.Errorf("client pod on %s could not reach the server pod on %s (phase %s, logs error %v)", client, server, cl.Status.Phase, lerr)
	}
	// The answers must come from the server pod, not from anything else.
	if n := strings.Count(string(logs), "evictkit-workload server"); n != len(urls) {
		return fmt.Errorf("expected %d answers from the server pod, got %d", len(urls), n)
	}
	return nil
}

// netcheckNodes picks the server's and the client's nodes: two different
// worker nodes where there are two, else any two nodes, else one node.
func netcheckNodes(ctx context.Context, c kubernetes.Interface) (string, string, error) {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "", err
	}
	var workers, all []string
	for _, n := range nodes.Items {
		all = append(all, n.Name)
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; !cp {
			workers = append(workers, n.Name)
		}
	}
	sort.Strings(workers)
	sort.Strings(all)
	switch {
	case len(workers) >= 2:
		return workers[0], workers[1], nil
	case len(all) >= 2:
		return all[0], all[1], nil
	case len(all) == 1:
		return all[0], all[0], nil
	}
	return "", "", errors.New("the cluster has no nodes")
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitPod waits until cond holds for the pod, returning its last state.
func waitPod(ctx context.Context, c kubernetes.Interface, ns, name string, timeout time.Duration, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		pod = p
		return cond(p), nil
	})
	if err != nil {
		state := "never seen"
		if pod != nil {
			state = describePod(pod)
		}
		return pod, fmt.Errorf("pod %s after %s: %s", name, timeout, state)
	}
	return pod, nil
}

func describePod(p *corev1.Pod) string {
	parts := []string{"phase " + string(p.Status.Phase)}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			parts = append(parts, fmt.Sprintf("%s waiting: %s %s", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message))
		case cs.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("%s terminated: %s exit %d", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode))
		}
	}
	return strings.Join(parts, ", ")
}

// deleteNetcheckLeftovers deletes the namespaces of earlier checks (an
// interrupted one leaves its own), waiting until they are gone.
func deleteNetcheckLeftovers(ctx context.Context, c kubernetes.Interface) error {
	list, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: netcheckLabel + "=true"})
	if err != nil {
		return err
	}
	for _, ns := range list.Items {
		if err := deleteNamespace(ctx, c, ns.Name); err != nil {
			return fmt.Errorf("removing namespace %s of an earlier network check: %w", ns.Name, err)
		}
	}
	return nil
}

// deleteNamespace deletes ns and waits until it is gone.
func deleteNamespace(ctx context.Context, c kubernetes.Interface, ns string) error {
	err := c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
