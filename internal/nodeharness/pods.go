package nodeharness

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// Priority classes of the test pods (cluster-wide, created once).
const (
	HighPriority = "evictkit-e2e-high"
	LowPriority  = "evictkit-e2e-low"
)

var priorityValues = map[string]int32{HighPriority: 100000, LowPriority: -10}

// E2ELabel marks every object the suites create.
const E2ELabel = "evictkit.dev/node-e2e"

// EnsurePriorityClasses creates the test priority classes if missing.
func (f *Framework) EnsurePriorityClasses(ctx context.Context) error {
	for name, value := range priorityValues {
		pc := &schedulingv1.PriorityClass{
			ObjectMeta:  metav1.ObjectMeta{Name: name, Labels: map[string]string{E2ELabel: "true"}},
			Value:       value,
			Description: "evictkit node e2e test pods",
		}
		_, err := f.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating priority class %s: %w", name, err)
		}
	}
	return nil
}

// CreateNamespace creates a namespace named after base and waits until
// pods can be created in it (its default service account exists).
func (f *Framework) CreateNamespace(ctx context.Context, base string) (string, error) {
	ns, err := f.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: f.Suite + "-" + base + "-",
		Labels:       map[string]string{E2ELabel: "true"},
	}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating a namespace for %s: %w", base, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := f.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return "", fmt.Errorf("namespace %s: no default service account within 1m", ns.Name)
	}
	return ns.Name, nil
}

// DeleteNamespace deletes a namespace with its pods at once (grace 0) and
// waits until it is gone, and until the node under test has stopped the
// pods it ran of it (see waitPodsStopped).
func (f *Framework) DeleteNamespace(ctx context.Context, ns string) error {
	pods := f.Client.CoreV1().Pods(ns)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the pods of %s: %w", ns, err)
	}
	err := f.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := f.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s still exists 3m after its deletion", ns)
	}
	return f.waitPodsStopped(ctx, ns)
}

// waitPodsStopped waits until the node under test runs no pod sandbox of
// namespace ns. The API server forgets a pod deleted with grace 0 at once,
// while the kubelet stops its containers afterwards: until then the pod
// still holds its memory, PIDs and open files. It then records when, so
// that Observe reads no figures from before.
//
// A crictl call that fails (a busy containerd times out its answer, as on
// the cgroup v2 VM) is asked again until the bound; the last failure is
// reported if none answered.
func (f *Framework) waitPodsStopped(ctx context.Context, ns string) error {
	var running string
	var lastErr error
	answered := false
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := f.Exec(ctx, "crictl", "pods", "--quiet", "--state", "ready", "--label", "io.kubernetes.pod.namespace="+ns)
		if err != nil {
			lastErr = err
			return false, nil
		}
		answered, lastErr = true, nil
		running = strings.TrimSpace(out)
		return running == "", nil
	})
	switch {
	case err != nil && lastErr != nil:
		return fmt.Errorf("node %s: asking for the pod sandboxes of namespace %s failed until 2m after its deletion: %w", f.Node, ns, lastErr)
	case err != nil && answered:
		return fmt.Errorf("node %s: pod sandboxes of namespace %s still ready 2m after its deletion: %q", f.Node, ns, running)
	case err != nil:
		return fmt.Errorf("node %s: waiting for the pod sandboxes of namespace %s: %w", f.Node, ns, err)
	}
	f.podsStoppedAt = time.Now()
	return nil
}

// PodOption changes a test pod.
type PodOption func(*corev1.Pod)

// Pod is a pod bound to the node under test (no scheduler: the kubelet
// admits it, as in upstream's node e2e) running the workload image with
// args in one container named after the pod; it never restarts.
func (f *Framework) Pod(name string, args []string, opts ...PodOption) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{E2ELabel: "true"}},
		Spec: corev1.PodSpec{
			NodeName:      f.Node,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:            name,
				Image:           f.Image,
				ImagePullPolicy: corev1.PullNever,
				Args:            args,
			}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func setResources(p *corev1.Pod, requests, limits corev1.ResourceList) {
	c := &p.Spec.Containers[0]
	if requests != nil {
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		for k, v := range requests {
			c.Resources.Requests[k] = v
		}
	}
	if limits != nil {
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		for k, v := range limits {
			c.Resources.Limits[k] = v
		}
	}
}

// MemoryRequest gives the container a memory request (Burstable).
func MemoryRequest(q string) PodOption {
	return func(p *corev1.Pod) {
		setResources(p, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}, nil)
	}
}

// MemoryRequestLimit gives the container a memory request and a higher
// limit (Burstable, capped).
func MemoryRequestLimit(request, limit string) PodOption {
	return func(p *corev1.Pod) {
		setResources(p, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(request)},
			corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit)})
	}
}

// Guaranteed gives the container equal CPU and memory requests and limits.
func Guaranteed(cpu, memory string) PodOption {
	return func(p *corev1.Pod) {
		rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
		setResources(p, rl, rl)
	}
}

// EphemeralStorage sets the container's ephemeral-storage request and limit
// ("" leaves one out).
func EphemeralStorage(request, limit string) PodOption {
	return func(p *corev1.Pod) {
		if request != "" {
			setResources(p, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(request)}, nil)
		}
		if limit != "" {
			setResources(p, nil, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(limit)})
		}
	}
}

// PriorityClass sets the pod's priority class.
func PriorityClass(name string) PodOption {
	return func(p *corev1.Pod) { p.Spec.PriorityClassName = name }
}

// EmptyDir mounts an emptyDir volume at path; medium Memory makes it a
// tmpfs; sizeLimit "" means none.
func EmptyDir(path string, medium corev1.StorageMedium, sizeLimit string) PodOption {
	return func(p *corev1.Pod) {
		src := &corev1.EmptyDirVolumeSource{Medium: medium}
		if sizeLimit != "" {
			q := resource.MustParse(sizeLimit)
			src.SizeLimit = &q
		}
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: src}})
		c := &p.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "scratch", MountPath: path})
	}
}

// ConfigMapVolume mounts configMap name at path. If the configMap does not
// exist, the kubelet admits the pod but never starts it: it waits for the
// volume, so the pod has no sandbox, no containers and no stats.
func ConfigMapVolume(name, path string) PodOption {
	return func(p *corev1.Pod) {
		src := &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: src}})
		c := &p.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "config", MountPath: path})
	}
}

// HostPathReadOnly mounts a directory of the node read-only at path in
// the container (the same path).
func HostPathReadOnly(name, path string) PodOption {
	return hostPathMount(name, path, path, nil, true)
}

// HostDir mounts an existing directory of the node, writable, at path in
// the container.
func HostDir(name, hostPath, path string) PodOption {
	kind := corev1.HostPathDirectory
	return hostPathMount(name, hostPath, path, &kind, false)
}

// hostPathMount adds a hostPath volume of the node's hostPath (of type
// kind, nil: unchecked) and mounts it at path in the container.
func hostPathMount(name, hostPath, path string, kind *corev1.HostPathType, readOnly bool) PodOption {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{
			Name:         name,
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostPath, Type: kind}},
		})
		c := &p.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: readOnly})
	}
}

// GracePeriod sets terminationGracePeriodSeconds.
func GracePeriod(seconds int64) PodOption {
	return func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &seconds }
}

// Tolerate adds a NoSchedule toleration of a taint key.
func Tolerate(key string) PodOption {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{
			Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
		})
	}
}

// Scheduled leaves the pod to the scheduler instead of binding it to the
// node under test.
func Scheduled() PodOption {
	return func(p *corev1.Pod) { p.Spec.NodeName = "" }
}

// ScheduledOnlyOn leaves the pod to the scheduler but lets it run only on
// the named node (its hostname label): it stays Pending while the node
// cannot take it, e.g. for a taint it does not tolerate.
func ScheduledOnlyOn(node string) PodOption {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = ""
		p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
	}
}

// CreatePod creates p in ns.
func (f *Framework) CreatePod(ctx context.Context, ns string, p *corev1.Pod) (*corev1.Pod, error) {
	created, err := f.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating pod %s/%s: %w", ns, p.Name, err)
	}
	return created, nil
}

// Pods lists the pods of ns.
func (f *Framework) Pods(ctx context.Context, ns string) ([]corev1.Pod, error) {
	list, err := f.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", ns, err)
	}
	return list.Items, nil
}

// IsRunning reports a pod whose containers all run.
func IsRunning(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return len(p.Status.ContainerStatuses) > 0
}

// DescribePod is a one-line account of a pod's state for failure messages.
func DescribePod(p *corev1.Pod) string {
	s := fmt.Sprintf("%s: phase=%s", p.Name, p.Status.Phase)
	if p.Status.Reason != "" {
		s += " reason=" + p.Status.Reason
	}
	if p.Status.Message != "" {
		s += fmt.Sprintf(" message=%q", p.Status.Message)
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Running != nil:
			s += fmt.Sprintf(" [%s running]", cs.Name)
		case cs.State.Waiting != nil:
			s += fmt.Sprintf(" [%s waiting %s]", cs.Name, cs.State.Waiting.Reason)
		case cs.State.Terminated != nil:
			s += fmt.Sprintf(" [%s terminated %s exit %d]", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode)
		}
	}
	return s
}

// ExtraContainer adds a second container running the workload image with
// args and, if limit is not "", that ephemeral-storage limit.
func (f *Framework) ExtraContainer(name string, args []string, limit string) PodOption {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: name, Image: f.Image, ImagePullPolicy: corev1.PullNever, Args: args}
		if limit != "" {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(limit)}
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
}

// Sidecar adds a restartable init container (restartPolicy Always: a
// sidecar) running the workload image with args and, if limit is not "",
// that ephemeral-storage limit.
func (f *Framework) Sidecar(name string, args []string, limit string) PodOption {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: name, Image: f.Image, ImagePullPolicy: corev1.PullNever, Args: args,
			RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}
		if limit != "" {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(limit)}
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
}

// RemoveLeftovers deletes what an interrupted run left behind: namespaces
// labelled E2ELabel (with their pods) and static test pod manifests. A
// hog left running would skew every observation of the next run.
func (f *Framework) RemoveLeftovers(ctx context.Context) ([]string, error) {
	list, err := f.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: E2ELabel + "=true"})
	if err != nil {
		return nil, fmt.Errorf("listing leftover namespaces: %w", err)
	}
	var removed []string
	for _, ns := range list.Items {
		if err := f.DeleteNamespace(ctx, ns.Name); err != nil {
			return removed, err
		}
		removed = append(removed, ns.Name)
	}
	dir, err := f.staticPodPath(ctx)
	if err != nil {
		return removed, err
	}
	out, err := f.Exec(ctx, "sh", "-c", fmt.Sprintf("for m in %s; do [ -e \"$m\" ] && rm -f \"$m\" && echo \"$m\"; done; true", staticPodFile(dir, "*")))
	if err != nil {
		return removed, err
	}
	for m := range strings.Lines(out) {
		removed = append(removed, strings.TrimSpace(m))
	}
	return removed, nil
}
