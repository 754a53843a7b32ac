//evictkit:file EvictionPSI

package eviction

import (
	"os"

	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The shell's side of the PSI signals: reading them for a pass.

// readProcPressureMemory reads the node's memory pressure file.
func readProcPressureMemory() ([]byte, error) { return os.ReadFile(procPressureMemory) }

// observePSI records the PSI signals of this pass: from the Summary API
// where it has them, from the pressure file otherwise. A failure is
// logged and leaves them unobserved (their thresholds then count as not
// met, as for any signal without figures).
func (m *managerImpl) observePSI(logger klog.Logger, obs *observationSet, summary *statsapi.Summary) {
	if observeSummaryPSI(obs, summary) {
		return
	}
	content, err := m.readPressure()
	if err == nil {
		err = observePressureFile(obs, content, m.clock.Now())
	}
	if err != nil {
		logger.Error(err, "Eviction manager: cannot observe memory pressure stall information; PSI thresholds are not evaluated this pass", "file", procPressureMemory)
	}
}
