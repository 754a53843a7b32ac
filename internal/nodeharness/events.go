package nodeharness

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// PodEvents lists the events with the given reason about a pod.
func (f *Framework) PodEvents(ctx context.Context, ns, pod, reason string) ([]corev1.Event, error) {
	sel := fields.Set{
		"involvedObject.kind": "Pod",
		"involvedObject.name": pod,
		"reason":              reason,
	}.AsSelector().String()
	list, err := f.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing %s events of pod %s/%s: %w", reason, ns, pod, err)
	}
	return list.Items, nil
}

// NodeEvents lists the events with the given reason about the node under
// test (the kubelet records them in the default namespace).
func (f *Framework) NodeEvents(ctx context.Context, reason string) ([]corev1.Event, error) {
	sel := fields.Set{
		"involvedObject.kind": "Node",
		"involvedObject.name": f.Node,
		"reason":              reason,
	}.AsSelector().String()
	list, err := f.Client.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing %s events of node %s: %w", reason, f.Node, err)
	}
	return list.Items, nil
}
