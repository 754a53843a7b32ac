package nodeharness

import (
	"bytes"
	"context"
	"fmt"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The kubelet's eviction counters, by eviction_signal: kubelet_evictions,
// and the dry run's (EvictionDryRun, evictkit's kubelet only).
const (
	evictionsMetric       = "kubelet_evictions"
	dryRunEvictionsMetric = "kubelet_evictions_dry_run"
)

// EvictionCounts scrapes the kubelet's /metrics through the API server and
// returns kubelet_evictions by eviction_signal (an empty map before the
// first eviction since the kubelet started: the counter restarts with it).
func (f *Framework) EvictionCounts(ctx context.Context) (map[string]int, error) {
	return f.signalCounts(ctx, evictionsMetric)
}

// DryRunEvictionCounts is EvictionCounts for kubelet_evictions_dry_run.
func (f *Framework) DryRunEvictionCounts(ctx context.Context) (map[string]int, error) {
	return f.signalCounts(ctx, dryRunEvictionsMetric)
}

func (f *Framework) signalCounts(ctx context.Context, metric string) (map[string]int, error) {
	raw, err := f.Client.CoreV1().RESTClient().Get().Resource("nodes").Name(f.Node).
		SubResource("proxy").Suffix("metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("node %s: scraping the kubelet's metrics: %w", f.Node, err)
	}
	return parseSignalCounts(raw, metric)
}

// parseSignalCounts returns the counter metric's samples in raw (the text
// exposition format) by their eviction_signal label.
func parseSignalCounts(raw []byte, metric string) (map[string]int, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing the kubelet's metrics: %w", err)
	}
	counts := map[string]int{}
	fam, ok := families[metric]
	if !ok {
		return counts, nil
	}
	for _, m := range fam.GetMetric() {
		signal := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "eviction_signal" {
				signal = l.GetValue()
			}
		}
		if signal == "" {
			return nil, fmt.Errorf("%s sample without an eviction_signal label", metric)
		}
		counts[signal] = int(m.GetCounter().GetValue())
	}
	return counts, nil
}
