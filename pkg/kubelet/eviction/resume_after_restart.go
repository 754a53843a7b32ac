//evictkit:file EvictionResumeAfterRestart

package eviction

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"

	"k8s.io/kubernetes/pkg/kubelet/metrics"
)

// evictionResumeAfterRestart: an eviction a previous kubelet process
// started and did not finish is finished, not started over.
const evictionResumeAfterRestart featuregate.Feature = "EvictionResumeAfterRestart"

var _ = addAlphaFeature(alphaFeature{gate: evictionResumeAfterRestart})

// Resume after restart (EvictionResumeAfterRestart, alpha).
//
// An eviction's kill lasts the pod's grace period (up to
// evictionMaxPodGracePeriod for a soft threshold), and the pod's Failed
// status and DisruptionTarget condition reach the API server only once its
// containers have stopped. A kubelet that dies during the kill leaves no
// trace of it but the Evicted event: the next kubelet process finds the
// pod running, evicts it again if the pressure lasts (a second Evicted
// event, a second count, a new grace period), or lets it run on after its
// SIGTERM if the pressure has gone.
//
// With the gate on, the manager writes a record into the pod's directory
// (the kubelet's GetPodDir, where the pod's volumes live; removed with
// them) before it records the event, and marks it done once the kill has
// returned and been counted. Each pass looks, once per pod it has not
// seen before, for a record a previous process left; for each it finishes
// the eviction, before it acts on any threshold:
//
//   - a record not done: the kill again, with the status the first one
//     set, with what is left of the grace period the first one gave
//     (counted from when it started), and kubelet_evictions counted with
//     the record's signal, as the first process never got to count it;
//   - a record done: the kill returned but the pod is still active (the
//     kubelet died before the Failed status was posted), so the status is
//     set again with a kill of no grace period, and nothing is counted;
//   - no new Evicted event either way.
//
// The pass returns the pods it resumed, so the monitoring loop waits for
// their cleanup as after any eviction. An eviction decided before any pass
// has looked at the pod (the fast path's, say) finishes the previous
// process's in the same way instead of starting a new one. A record that cannot be written
// leaves the eviction as upstream's; one that cannot be read is logged and
// ignored. Without GetPodDir on the kubelet's DiskInfoProvider the gate
// does nothing. A kubelet killed between a kill's return and the record's
// "done" counts that eviction twice; the window is one file write.

// recordFile is the record's name in the pod's directory.
const recordFile = "eviction.json"

// evictionRecord is what the manager keeps of an eviction in progress.
type evictionRecord struct {
	Signal             string    `json:"signal"`
	Message            string    `json:"message"`
	Disruption         bool      `json:"disruption"`
	GracePeriodSeconds int64     `json:"gracePeriodSeconds"`
	Started            time.Time `json:"started"`
	// Done: the kill returned and the eviction was counted.
	Done bool `json:"done"`
}

// resumedKill is how to finish a recorded eviction.
type resumedKill struct {
	pod    *v1.Pod
	record evictionRecord
	// gracePeriodSeconds is what is left of the first kill's.
	gracePeriodSeconds int64
	// count: the eviction is counted when the kill returns.
	count bool
}

// resumeKill decides how to finish a recorded eviction at now.
func resumeKill(pod *v1.Pod, r evictionRecord, now time.Time) resumedKill {
	k := resumedKill{pod: pod, record: r, count: !r.Done}
	if r.Done {
		return k
	}
	left := r.GracePeriodSeconds - int64(now.Sub(r.Started)/time.Second)
	k.gracePeriodSeconds = max(left, 0)
	return k
}

// encodeRecord and decodeRecord are the record's file format.
func encodeRecord(r evictionRecord) ([]byte, error) { return json.Marshal(r) }

func decodeRecord(data []byte) (evictionRecord, error) {
	var r evictionRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return r, err
	}
	if r.Started.IsZero() || r.GracePeriodSeconds < 0 {
		return r, fmt.Errorf("started %v, gracePeriodSeconds %d: not an eviction record", r.Started, r.GracePeriodSeconds)
	}
	return r, nil
}

// podDirProvider is the part of the kubelet that knows where a pod's
// directory is; the kubelet's DiskInfoProvider has it.
type podDirProvider interface {
	GetPodDir(podUID types.UID) string
}

// evictionRecords reads and writes the records of one kubelet process.
type evictionRecords struct {
	mu     sync.Mutex
	podDir func(types.UID) string
	// looked are the pods whose directory the process has looked at.
	looked map[types.UID]bool
}

// use takes the pod directories from the kubelet's DiskInfoProvider, when
// it has them.
func (s *evictionRecords) use(logger klog.Logger, d DiskInfoProvider) {
	p, ok := d.(podDirProvider)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		logger.Info("Eviction manager: EvictionResumeAfterRestart is on but the kubelet gives no pod directories; evictions are not recorded")
		return
	}
	s.podDir = p.GetPodDir
}

func (s *evictionRecords) path(uid types.UID) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.podDir == nil || uid == "" {
		return "", false
	}
	return filepath.Join(s.podDir(uid), recordFile), true
}

// write replaces the pod's record, atomically.
func (s *evictionRecords) write(uid types.UID, r evictionRecord) error {
	path, ok := s.path(uid)
	if !ok {
		return nil
	}
	data, err := encodeRecord(r)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+recordFile+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// unseen returns the records that pods not looked at before hold: records
// a previous process left. Pods no longer active are forgotten.
func (s *evictionRecords) unseen(logger klog.Logger, pods []*v1.Pod) map[*v1.Pod]evictionRecord {
	s.mu.Lock()
	looked := s.looked
	s.looked = make(map[types.UID]bool, len(pods))
	for _, pod := range pods {
		s.looked[pod.UID] = true
	}
	s.mu.Unlock()
	found := map[*v1.Pod]evictionRecord{}
	for _, pod := range pods {
		if looked[pod.UID] {
			continue
		}
		if r, ok := s.read(logger, pod); ok {
			found[pod] = r
		}
	}
	return found
}

// firstLook returns the pod's record if the process has not looked at the
// pod before (a previous process's record), and marks it looked at.
func (s *evictionRecords) firstLook(logger klog.Logger, pod *v1.Pod) (evictionRecord, bool) {
	s.mu.Lock()
	if s.looked == nil {
		s.looked = map[types.UID]bool{}
	}
	looked := s.looked[pod.UID]
	s.looked[pod.UID] = true
	s.mu.Unlock()
	if looked {
		return evictionRecord{}, false
	}
	return s.read(logger, pod)
}

// read returns the pod's record, if it has a readable one.
func (s *evictionRecords) read(logger klog.Logger, pod *v1.Pod) (evictionRecord, bool) {
	path, ok := s.path(pod.UID)
	if !ok {
		return evictionRecord{}, false
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return evictionRecord{}, false
	}
	if err == nil {
		var r evictionRecord
		if r, err = decodeRecord(data); err == nil {
			return r, true
		}
	}
	logger.Error(err, "Eviction manager: ignoring an unreadable eviction record", "pod", klog.KObj(pod), "path", path)
	return evictionRecord{}, false
}

// recordStart writes the record of an eviction about to start and
// returns it.
func (m *managerImpl) recordStart(logger klog.Logger, e *podEviction) evictionRecord {
	r := evictionRecord{Signal: e.signal, Message: e.message, Disruption: e.disruption,
		GracePeriodSeconds: e.gracePeriodSeconds, Started: m.clock.Now()}
	if err := m.records.write(e.pod.UID, r); err != nil {
		logger.Error(err, "Eviction manager: cannot record the eviction; a kubelet restart before it ends starts it over", "pod", klog.KObj(e.pod))
	}
	return r
}

// recordDone marks a pod's record done, before the eviction is counted.
func (m *managerImpl) recordDone(logger klog.Logger, pod *v1.Pod, r evictionRecord) {
	r.Done = true
	if err := m.records.write(pod.UID, r); err != nil {
		logger.Error(err, "Eviction manager: cannot mark the eviction record done", "pod", klog.KObj(pod))
	}
}

// resumeEvictions finishes the evictions that a previous process left in
// the records of pods this pass sees for the first time, all at once, and
// returns the pods.
func (m *managerImpl) resumeEvictions(logger klog.Logger, pods []*v1.Pod) []*v1.Pod {
	found := m.records.unseen(logger, pods)
	if len(found) == 0 {
		return nil
	}
	now := m.clock.Now()
	var resumed []*v1.Pod
	var wg sync.WaitGroup
	for _, pod := range pods { // in the active pods' order, for the log
		r, ok := found[pod]
		if !ok {
			continue
		}
		resumed = append(resumed, pod)
		wg.Go(func() { m.finishResumed(logger, resumeKill(pod, r, now)) })
	}
	wg.Wait()
	return resumed
}

// resumedMessage is what the manager logs for each eviction it resumes.
const resumedMessage = "Eviction manager: resuming an eviction a previous kubelet process started"

// finishResumed carries out one resumed kill.
func (m *managerImpl) finishResumed(logger klog.Logger, k resumedKill) {
	logger.Info(resumedMessage, "pod", klog.KObj(k.pod), "podUID", k.pod.UID, "started", k.record.Started, "done", k.record.Done, "gracePeriodSeconds", k.gracePeriodSeconds)
	m.killEvicted(logger, k.pod, k.gracePeriodSeconds, k.record.Message, k.record.Disruption)
	if !k.count {
		return
	}
	m.recordDone(logger, k.pod, k.record)
	metrics.Evictions.WithLabelValues(k.record.Signal).Inc()
}
