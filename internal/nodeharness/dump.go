package nodeharness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Dump writes what a failed test needs for diagnosis into dir: the node
// (conditions, taints), the pods and events of ns, the kubelet's journal
// since since, its running configuration and a Summary API snapshot. Each
// part is written even when another fails; failures are listed in
// dir/dump-errors.txt.
func (f *Framework) Dump(ctx context.Context, dir, ns string, since time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []string
	write := func(name string, produce func() ([]byte, error)) {
		data, err := produce()
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", name, err))
			if data == nil {
				return
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", name, err))
		}
	}
	write("node.yaml", func() ([]byte, error) {
		n, err := f.GetNode(ctx)
		if err != nil {
			return nil, err
		}
		return yaml.Marshal(n)
	})
	if ns != "" {
		write("pods.txt", func() ([]byte, error) {
			pods, err := f.Pods(ctx, ns)
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for i := range pods {
				b.WriteString(DescribePod(&pods[i]) + "\n")
			}
			return []byte(b.String()), nil
		})
		write("pods.yaml", func() ([]byte, error) {
			pods, err := f.Pods(ctx, ns)
			if err != nil {
				return nil, err
			}
			return yaml.Marshal(pods)
		})
		write("events.txt", func() ([]byte, error) { return f.eventLines(ctx, ns) })
	}
	write("node-events.txt", func() ([]byte, error) { return f.eventLines(ctx, metav1.NamespaceDefault) })
	write("kubelet.log", func() ([]byte, error) {
		out, err := f.Exec(ctx, "journalctl", "--no-pager", "-u", "kubelet", "--since", fmt.Sprintf("@%d", since.Unix()))
		return []byte(out), err
	})
	write("configz.json", func() ([]byte, error) {
		cfg, err := f.RunningKubeletConfig(ctx)
		if err != nil {
			return nil, err
		}
		return json.MarshalIndent(cfg, "", "  ")
	})
	write("summary.json", func() ([]byte, error) {
		s, err := f.Summary(ctx)
		if err != nil {
			return nil, err
		}
		return json.MarshalIndent(s, "", "  ")
	})
	if len(errs) > 0 {
		_ = os.WriteFile(filepath.Join(dir, "dump-errors.txt"), []byte(strings.Join(errs, "\n")+"\n"), 0o644)
		return fmt.Errorf("dump %s incomplete: %s", dir, strings.Join(errs, "; "))
	}
	return nil
}

func (f *Framework) eventLines(ctx context.Context, ns string) ([]byte, error) {
	list, err := f.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		return list.Items[i].LastTimestamp.Before(&list.Items[j].LastTimestamp)
	})
	var b strings.Builder
	for _, e := range list.Items {
		fmt.Fprintf(&b, "%s %s %s/%s %s: %s %v\n", e.LastTimestamp.UTC().Format(time.RFC3339), e.Type,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, e.Annotations)
	}
	return []byte(b.String()), nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DumpDir is the directory under logDir for the diagnostics of the spec
// whose full text is given: the text with anything but letters, digits,
// dots, dashes and underscores turned into dashes, at most 120 bytes.
func DumpDir(logDir, spec string) string {
	name := strings.Trim(unsafeName.ReplaceAllString(spec, "-"), "-")
	if len(name) > 120 {
		name = name[:120]
	}
	return filepath.Join(logDir, name)
}
