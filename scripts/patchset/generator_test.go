// Package patchset holds the tests of the patch generator (package.sh) and
// of the series checks (checks.sh):
// each way a marker can be wrong is an error that names the file and line,
// never code silently cut from or leaked into a patch.
package patchset

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// generator runs script in bash with package.sh sourced (EVICTKIT set to
// evictkit, the working directory dir) and returns its stdout, stderr and
// whether it succeeded.
func generator(t *testing.T, evictkit, dir, script string, args ...string) (string, string, bool) {
	t.Helper()
	return sourced(t, "package.sh", dir, []string{"EVICTKIT=" + evictkit}, script, args...)
}

// fixtureEnviron is this process's environment without the upstream base
// a make target picked (K8S_VERSION and the -modfile it implies): the
// fixtures are repositories on the default base.
func fixtureEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "K8S_VERSION=") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	return env
}

// sourced runs script in bash, in dir, with file (of this directory)
// sourced and env added, and returns its stdout, stderr and whether it
// succeeded.
func sourced(t *testing.T, file, dir string, env []string, script string, args ...string) (string, string, bool) {
	t.Helper()
	src, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{"-c", `set -euo pipefail; source "$0"; ` + script, src}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(fixtureEnviron(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), err == nil
}

// root is the evictkit checkout the tests run in.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStripFeatures(t *testing.T) {
	const base = "package eviction\n\nfunc a() {}\n"
	cases := []struct {
		name     string
		file     string
		features string // enabled, space-separated
		want     string // output, when it succeeds
		wantErr  string // a part of the error, when it fails
	}{
		{
			name:     "blocks of an enabled feature stay, without their markers",
			file:     base + "//evictkit:begin EvictionPSI\nfunc psi() {}\n//evictkit:end EvictionPSI\n",
			features: "EvictionReclaimSized EvictionPSI",
			want:     base + "func psi() {}\n",
		},
		{
			name: "blocks of a feature not reached are cut",
			file: base + "//evictkit:begin EvictionPSI\nfunc psi() {}\n//evictkit:end EvictionPSI\nfunc b() {}\n",
			want: base + "func b() {}\n",
		},
		{
			name: "a whole file of a feature not reached is left out",
			file: "//evictkit:file EvictionDryRun\n\n" + base,
			want: "",
		},
		{
			name:     "a whole file of an enabled feature loses its marker line and the blank after it",
			file:     "//evictkit:file EvictionDryRun\n\n" + base,
			features: "EvictionDryRun",
			want:     base,
		},
		{
			name:    "a space after // is an error, not a comment",
			file:    base + "// evictkit:begin EvictionPSI\nfunc psi() {}\n// evictkit:end EvictionPSI\n",
			wantErr: ":4: marker with a space after //",
		},
		{
			name:    "a misspelled feature is an error",
			file:    base + "//evictkit:begin EvictionPsi\nfunc psi() {}\n//evictkit:end EvictionPsi\n",
			wantErr: ":4: //evictkit:begin names unknown feature EvictionPsi",
		},
		{
			name:    "a file marker of an unknown feature is an error",
			file:    "//evictkit:file EvictionTypo\n\n" + base,
			wantErr: ":1: //evictkit:file names unknown feature EvictionTypo",
		},
		{
			name:    "a marker without a feature is an error",
			file:    base + "//evictkit:begin\n//evictkit:end\n",
			wantErr: ":4: //evictkit:begin without a feature",
		},
		{
			name:    "text after the feature is an error",
			file:    base + "//evictkit:begin EvictionPSI and more\n//evictkit:end EvictionPSI\n",
			wantErr: ":4: //evictkit:begin EvictionPSI: text after the feature",
		},
		{
			name:    "a marker after code on its line is an error",
			file:    base + "var x = 1 //evictkit:begin EvictionPSI\n",
			wantErr: ":4: not a marker",
		},
		{
			name:    "an unknown marker word is an error",
			file:    base + "//evictkit:start EvictionPSI\n",
			wantErr: ":4: not a marker",
		},
		{
			name:    "blocks do not nest",
			file:    base + "//evictkit:begin EvictionPSI\n//evictkit:begin EvictionDryRun\n",
			wantErr: ":5: //evictkit:begin EvictionDryRun inside the block of EvictionPSI",
		},
		{
			name:    "an end must close the open block",
			file:    base + "//evictkit:begin EvictionPSI\n//evictkit:end EvictionDryRun\n",
			wantErr: ":5: //evictkit:end EvictionDryRun does not close EvictionPSI",
		},
		{
			name:    "a block left open is an error",
			file:    base + "//evictkit:begin EvictionPSI\nfunc psi() {}\n",
			wantErr: "block of EvictionPSI not closed",
		},
		{
			name:    "a file marker below the first line is an error",
			file:    base + "//evictkit:file EvictionPSI\n",
			wantErr: ":4: //evictkit:file must be the first line",
		},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.Repeat("f", i+1)+".go")
			if err := os.WriteFile(file, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, ok := generator(t, root(t), dir, `enabled_features="$1"; strip_features "$2"`, tc.features, file)
			switch {
			case tc.wantErr != "" && ok:
				t.Errorf("succeeded with %q, want an error containing %q", out, tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(errOut, tc.wantErr):
				t.Errorf("error %q, want one containing %q", errOut, tc.wantErr)
			case tc.wantErr == "" && !ok:
				t.Errorf("failed: %s", errOut)
			case tc.wantErr == "" && out != tc.want:
				t.Errorf("output %q, want %q", out, tc.want)
			}
		})
	}
}

func TestStripScenarioFeature(t *testing.T) {
	const body = "decide\nthreshold memory.available<1Gi\n----\n"
	cases := []struct {
		name, file, features, want, wantErr string
	}{
		{name: "an untagged file is kept whole", file: body, want: body},
		{name: "a file of a feature not reached is left out", file: "# evictkit:file EvictionPSI\n\n" + body, want: ""},
		{name: "a file of an enabled feature loses its tag", file: "# evictkit:file EvictionPSI\n\n" + body, features: "EvictionPSI", want: body},
		{name: "an unknown feature is an error", file: "# evictkit:file EvictionPsi\n\n" + body, wantErr: ":1: # evictkit:file names unknown feature EvictionPsi"},
		{name: "a tag below the first line is an error", file: body + "# evictkit:file EvictionPSI\n", wantErr: ":4: # evictkit:file FEATURE must be the first line"},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.Repeat("s", i+1)+".txt")
			if err := os.WriteFile(file, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, ok := generator(t, root(t), dir, `enabled_features="$1"; strip_scenario_feature "$2"`, tc.features, file)
			switch {
			case tc.wantErr != "" && (ok || !strings.Contains(errOut, tc.wantErr)):
				t.Errorf("ok=%v error %q, want an error containing %q", ok, errOut, tc.wantErr)
			case tc.wantErr == "" && (!ok || out != tc.want):
				t.Errorf("ok=%v output %q (error %q), want %q", ok, out, errOut, tc.want)
			}
		})
	}
}

func TestFeaturesThrough(t *testing.T) {
	for _, tc := range []struct{ feature, want, wantErr string }{
		{feature: "", want: ""},
		{feature: "ranking", want: "ranking\n"},
		{feature: "wired", want: "ranking decision notifier wired\n"},
		{feature: "EvictionReclaimSized", want: "ranking decision notifier wired fuzz EvictionReclaimSized\n"},
		{feature: "EvictionExplain", want: "ranking decision notifier wired fuzz EvictionReclaimSized EvictionFastPath EvictionExplain\n"},
		{feature: "EvictionExplian", wantErr: "unknown feature EvictionExplian (known, in order: ranking decision notifier wired fuzz EvictionReclaimSized"},
	} {
		out, errOut, ok := generator(t, root(t), t.TempDir(), `features_through "$1"`, tc.feature)
		switch {
		case tc.wantErr != "" && (ok || !strings.Contains(errOut, tc.wantErr)):
			t.Errorf("%q: ok=%v error %q, want one containing %q", tc.feature, ok, errOut, tc.wantErr)
		case tc.wantErr == "" && (!ok || out != tc.want):
			t.Errorf("%q: ok=%v output %q, want %q", tc.feature, ok, out, tc.want)
		}
	}
}

// fixtureRepo writes files (path: text) into a new git repository, all
// committed and tagged as the series' base, and returns its directory.
func fixtureRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for path, text := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture"}, {"tag", "evictkit-base"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// files lists the files under dir, relative to it, in lexical order.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCopyPackageBaseAndWired: at the base the core goes beside upstream's
// files; from wired on the package replaces them, api/ always staying.
func TestCopyPackageBaseAndWired(t *testing.T) {
	evictkit := fixtureRepo(t, map[string]string{
		"scripts/lib/versions.sh":            "K8S_VERSION=v1.37.2\n",
		"pkg/kubelet/eviction/core.go":       "package eviction\n",
		"pkg/kubelet/eviction/manager.go":    "//evictkit:file wired\n\npackage eviction\n",
		"pkg/kubelet/eviction/doc.go":        "//evictkit:file wired\n\n// Package eviction is ours.\npackage eviction\n",
		"pkg/kubelet/eviction/api/ignore.go": "package api\n",
	})
	upstream := map[string]string{
		"pkg/kubelet/eviction/helpers.go":   "package eviction\n",
		"pkg/kubelet/eviction/doc.go":       "// Package eviction is upstream's.\npackage eviction\n",
		"pkg/kubelet/eviction/api/types.go": "package api\n",
	}
	for _, tc := range []struct {
		feature string
		want    []string
	}{
		{feature: "", want: []string{"pkg/kubelet/eviction/api/types.go", "pkg/kubelet/eviction/core.go", "pkg/kubelet/eviction/doc.go", "pkg/kubelet/eviction/helpers.go"}},
		{feature: "wired", want: []string{"pkg/kubelet/eviction/api/types.go", "pkg/kubelet/eviction/core.go", "pkg/kubelet/eviction/doc.go", "pkg/kubelet/eviction/manager.go"}},
	} {
		tree := fixtureRepo(t, upstream)
		if _, errOut, ok := generator(t, evictkit, tree, `copy_package ${1:+"$1"}`, tc.feature); !ok {
			t.Fatalf("copy_package %q: %s", tc.feature, errOut)
		}
		if got := files(t, tree); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("copy_package %q: %v, want %v", tc.feature, got, tc.want)
		}
		doc, err := os.ReadFile(filepath.Join(tree, "pkg/kubelet/eviction/doc.go"))
		if err != nil {
			t.Fatal(err)
		}
		if upstreamDoc := strings.Contains(string(doc), "upstream's."); upstreamDoc != (tc.feature == "") {
			t.Errorf("copy_package %q: doc.go is %q, want upstream's only at the base", tc.feature, doc)
		}
	}
}

// TestCopyPackageBaseRefusesToReplace: at the base a file of ours with an
// upstream file's name would silently replace it.
func TestCopyPackageBaseRefusesToReplace(t *testing.T) {
	evictkit := fixtureRepo(t, map[string]string{
		"scripts/lib/versions.sh":         "K8S_VERSION=v1.37.2\n",
		"pkg/kubelet/eviction/helpers.go": "package eviction\n\nfunc ours() {}\n",
	})
	tree := fixtureRepo(t, map[string]string{"pkg/kubelet/eviction/helpers.go": "package eviction\n"})
	_, errOut, ok := generator(t, evictkit, tree, `copy_package`)
	if ok || !strings.Contains(errOut, "would replace upstream's files") || !strings.Contains(errOut, "helpers.go") {
		t.Errorf("ok=%v error %q, want a refusal naming helpers.go", ok, errOut)
	}
}

// upstreamNotifierFiles are the upstream files the notifier feature lists
// in upstream_replaced, as a fixture tree's upstream package.
func upstreamNotifierFiles() map[string]string {
	tree := map[string]string{"pkg/kubelet/eviction/helpers.go": "package eviction\n"}
	for _, f := range []string{"memory_threshold_notifier.go", "memory_threshold_notifier_others.go", "memory_threshold_notifier_test.go", "memory_threshold_notifier_windows.go", "threshold_notifier_linux.go", "threshold_notifier_unsupported.go"} {
		tree["pkg/kubelet/eviction/"+f] = "package eviction\n\n// upstream's\n"
	}
	return tree
}

// TestCopyPackageReplacesListedFiles: before wired, a feature replaces
// the upstream files upstream_replaced lists for it, from its own commit
// on, and no other; ours of the same name take their place.
func TestCopyPackageReplacesListedFiles(t *testing.T) {
	evictkit := fixtureRepo(t, map[string]string{
		"scripts/lib/versions.sh":                           "K8S_VERSION=v1.37.2\n",
		"pkg/kubelet/eviction/core.go":                      "package eviction\n",
		"pkg/kubelet/eviction/memory_threshold_notifier.go": "//evictkit:file notifier\n\npackage eviction\n\n// ours\n",
	})
	for _, tc := range []struct {
		feature  string
		replaced bool
	}{{"decision", false}, {"notifier", true}} {
		tree := fixtureRepo(t, upstreamNotifierFiles())
		if _, errOut, ok := generator(t, evictkit, tree, `copy_package "$1"`, tc.feature); !ok {
			t.Fatalf("copy_package %s: %s", tc.feature, errOut)
		}
		got := strings.Join(files(t, tree), " ")
		for _, gone := range []string{"threshold_notifier_linux.go", "memory_threshold_notifier_test.go"} {
			if present := strings.Contains(got, gone); present == tc.replaced {
				t.Errorf("copy_package %s: %s present=%v, want %v (files: %s)", tc.feature, gone, present, !tc.replaced, got)
			}
		}
		text, err := os.ReadFile(filepath.Join(tree, "pkg/kubelet/eviction/memory_threshold_notifier.go"))
		if err != nil {
			t.Fatal(err)
		}
		if ours := strings.Contains(string(text), "// ours"); ours != tc.replaced {
			t.Errorf("copy_package %s: memory_threshold_notifier.go is %q, want ours=%v", tc.feature, text, tc.replaced)
		}
		if !strings.Contains(got, "helpers.go") || !strings.Contains(got, "core.go") {
			t.Errorf("copy_package %s: %s, want upstream's helpers.go beside our core.go", tc.feature, got)
		}
	}
}

// TestUpstreamReplacedErrors: an entry of upstream_replaced that names an
// unknown feature, or a file upstream does not have, is an error.
func TestUpstreamReplacedErrors(t *testing.T) {
	evictkit := fixtureRepo(t, map[string]string{
		"scripts/lib/versions.sh":      "K8S_VERSION=v1.37.2\n",
		"pkg/kubelet/eviction/core.go": "package eviction\n",
	})
	for _, tc := range []struct{ entry, want string }{
		{"notifer:threshold_notifier_linux.go", "names unknown feature notifer"},
		{"notifier:threshold_notifier_linux.go,no_such.go", "upstream_replaced names no_such.go, which upstream's package does not have"},
	} {
		tree := fixtureRepo(t, upstreamNotifierFiles())
		_, errOut, ok := generator(t, evictkit, tree, `upstream_replaced=("$1"); copy_package notifier`, tc.entry)
		if ok || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: ok=%v error %q, want one containing %q", tc.entry, ok, errOut, tc.want)
		}
	}
}

// TestCutPackageData: test data that is not Go or a scenario file goes
// with the feature data_features gives its path, and only then.
func TestCutPackageData(t *testing.T) {
	evictkit := fixtureRepo(t, map[string]string{
		"scripts/lib/versions.sh":                            "K8S_VERSION=v1.37.2\n",
		"pkg/kubelet/eviction/a.go":                          "package eviction\n",
		"pkg/kubelet/eviction/testdata/fuzz/FuzzX/seed":      "go test fuzz v1\n",
		"pkg/kubelet/eviction/testdata/golden/fuzzy-but-not": "base\n",
	})
	for _, tc := range []struct {
		features string
		want     []string
	}{
		{features: "", want: []string{"a.go", "testdata/golden/fuzzy-but-not"}},
		{features: "fuzz", want: []string{"a.go", "testdata/fuzz/FuzzX/seed", "testdata/golden/fuzzy-but-not"}},
	} {
		dest := t.TempDir()
		_, errOut, ok := generator(t, evictkit, dest, `enabled_features="$1"; cut_package "$2"`, tc.features, dest)
		if !ok {
			t.Fatalf("features %q: cut_package failed: %s", tc.features, errOut)
		}
		got := files(t, dest)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("features %q: cut %v, want %v", tc.features, got, tc.want)
		}
	}
}

// TestDataFeatureRefusesUnknownFeatures: a table entry naming a feature
// that is not in features_in_order would leave its data out of every patch.
func TestDataFeatureRefusesUnknownFeatures(t *testing.T) {
	_, errOut, ok := generator(t, root(t), t.TempDir(), `data_features=(testdata/fuzz/:fuz); data_feature testdata/fuzz/x`)
	if ok || !strings.Contains(errOut, "testdata/fuzz/:fuz names unknown feature fuz") {
		t.Errorf("ok=%v error %q, want a refusal naming the entry", ok, errOut)
	}
}

// TestCopyPackageRefusesUntrackedFiles: a file git does not track in the
// package would otherwise go into a patch from one working tree and not
// from another.
func TestCopyPackageRefusesUntrackedFiles(t *testing.T) {
	evictkit := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	versions, err := os.ReadFile(filepath.Join(root(t), "scripts", "lib", "versions.sh"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(evictkit, "scripts", "lib", "versions.sh"), string(versions))
	write(filepath.Join(evictkit, "pkg", "kubelet", "eviction", "a.go"), "package eviction\n")
	git(evictkit, "init", "-q")
	git(evictkit, "add", "-A")
	git(evictkit, "commit", "-q", "-m", "fixture")
	write(filepath.Join(evictkit, "pkg", "kubelet", "eviction", "new.go"), "package eviction\n")

	tree := t.TempDir()
	write(filepath.Join(tree, "pkg", "kubelet", "eviction", "upstream.go"), "package eviction\n")
	git(tree, "init", "-q")
	git(tree, "add", "-A")
	git(tree, "commit", "-q", "-m", "upstream")

	_, errOut, ok := generator(t, evictkit, tree, `copy_package`)
	if ok || !strings.Contains(errOut, "pkg/kubelet/eviction/new.go") || !strings.Contains(errOut, "git does not track") {
		t.Errorf("ok=%v error %q, want a refusal naming pkg/kubelet/eviction/new.go", ok, errOut)
	}
}

// checks runs script in bash with checks.sh sourced and returns its
// stderr and whether it succeeded.
func checks(t *testing.T, script string, args ...string) (string, bool) {
	t.Helper()
	_, stderr, ok := sourced(t, "checks.sh", "", nil, script, args...)
	return stderr, ok
}

func TestCheckMessages(t *testing.T) {
	long := strings.Repeat("x", 73)
	for _, tc := range []struct {
		name, msg, wantErr string
	}{
		{"a good message", "kubelet/eviction: say why\n\nBody wrapped at 72.\n", ""},
		{"a subject of 73 characters", "kubelet/eviction: " + long[:55] + "\n\nbody\n", "subject is 73 characters"},
		{"a subject without its area", "Say why\n\nbody\n", "does not start with its area"},
		{"no blank second line", "kubelet: x\nbody\n", "line 2 is not blank"},
		{"a body line of 73", "kubelet: x\n\n" + long + "\n", "0001-x.msg:3: 73 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "0001-x.msg"), []byte(tc.msg), 0o644); err != nil {
				t.Fatal(err)
			}
			stderr, ok := checks(t, `check_messages "$1"`, dir)
			switch {
			case tc.wantErr == "" && !ok:
				t.Fatalf("rejected: %s", stderr)
			case tc.wantErr != "" && ok:
				t.Fatalf("accepted; want an error with %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(stderr, tc.wantErr):
				t.Fatalf("error %q does not say %q", stderr, tc.wantErr)
			}
		})
	}
}

func TestCheckAddedLines(t *testing.T) {
	const header = "From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n---\ndiff --git a/f.go b/f.go\n--- a/f.go\n+++ b/f.go\n@@ -1 +1,2 @@\n package x\n"
	for _, tc := range []struct {
		name, added string
		ok          bool
	}{
		{"code without the project's name", "+var alphaGateSpecs = 1\n", true},
		{"an identifier with it", "+var evictkitGateSpecs = 1\n", false},
		{"a comment with it in capitals", "+// Evictkit fixes the order.\n", false},
		{"a removed line may have it", "-// evictkit was here\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "0001-x.patch"), []byte(header+tc.added), 0o644); err != nil {
				t.Fatal(err)
			}
			stderr, ok := checks(t, `check_added_lines "$1"`, dir)
			if ok != tc.ok {
				t.Fatalf("check_added_lines ok=%v, want %v (%s)", ok, tc.ok, stderr)
			}
			if !ok && !strings.Contains(stderr, "0001-x.patch:") {
				t.Fatalf("error %q does not name the patch and line", stderr)
			}
		})
	}
}

// replace_once edits a file only where its text occurs exactly once, and
// otherwise fails (a definition's edit that no longer applies to an
// upstream release must stop the generator, not leave the edit out).
func TestReplaceOnce(t *testing.T) {
	for _, tc := range []struct {
		name, old, want string
		ok              bool
	}{
		{name: "once", old: "b\n", want: "a\nB\nc\nc\n", ok: true},
		{name: "missing", old: "x\n", want: "a\nb\nc\nc\n"},
		{name: "twice", old: "c\n", want: "a\nb\nc\nc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := t.TempDir()
			if out, err := exec.Command("git", "-C", tree, "init", "-q").CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			file := filepath.Join(tree, "f.txt")
			if err := os.WriteFile(file, []byte("a\nb\nc\nc\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			repl := strings.ToUpper(tc.old)
			_, errOut, ok := generator(t, root(t), tree, `replace_once f.txt "$1" "$2"; echo done >done.txt`, tc.old, repl)
			if ok != tc.ok {
				t.Errorf("ok=%v, want %v (stderr %q)", ok, tc.ok, errOut)
			}
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("file is %q, want %q", got, tc.want)
			}
			if _, err := os.Stat(filepath.Join(tree, "done.txt")); (err == nil) != tc.ok {
				t.Errorf("the script went on after replace_once: %v, want %v", err == nil, tc.ok)
			}
			if _, err := os.Stat(file + ".new"); err == nil {
				t.Error("replace_once left f.txt.new behind")
			}
		})
	}
}
