// Command apidiff compares the exported API of evictkit's eviction package
// with upstream's k8s.io/kubernetes/pkg/kubelet/eviction.
//
// Both packages are built for GOOS=linux with `go list -export` and read back
// from their compiler export data with go/importer, so the comparison sees
// exactly what a caller compiled against either package sees. Every exported
// identifier is printed as one self-contained line (constants with type and
// value, variables with type, functions and methods with their signature,
// types with their underlying type, one line per exported struct field and
// interface method). Parameter names are left out: they are not part of the
// API. The two package paths, and their subpackages, are normalised so that
// both print as eviction.X.
//
// Lines only in upstream are printed with "-", lines only in ours with "+".
// Extra lines in ours are a difference too, unless they are listed in the
// allowlist file (scripts/apidiff/allowed-extra.txt by default; one exact
// line per entry, '#' starts a comment).
//
// Exit status: 0 identical, 1 different, 2 the tool itself failed.
//
// Usage:
//
//	go run ./scripts/apidiff [-v] [-old PKG] [-new PKG] [-allow FILE] [-goos OS]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const (
	upstreamPath = "k8s.io/kubernetes/pkg/kubelet/eviction"
	oursPath     = "github.com/evictkit/evictkit/pkg/kubelet/eviction"

	upstreamModule = "k8s.io/kubernetes/"
	oursModule     = "github.com/evictkit/evictkit/"
)

func main() {
	verbose := flag.Bool("v", false, "print the whole normalised API of both packages")
	oldPkg := flag.String("old", upstreamPath, "reference package (upstream)")
	newPkg := flag.String("new", oursPath, "package under test (ours)")
	allowFile := flag.String("allow", "", "allowlist of extra lines permitted in -new (default: scripts/apidiff/allowed-extra.txt in the main module)")
	goos := flag.String("goos", "linux", "GOOS to build both packages for")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./scripts/apidiff [flags]\n\n"+
			"Compares the exported API of -new against -old; exits 1 on any difference.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}

	if err := run(*oldPkg, *newPkg, *allowFile, *goos, *verbose); err != nil {
		var d diffError
		if errors.As(err, &d) {
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "apidiff: %v\n", err)
		os.Exit(2)
	}
}

type diffError struct{}

func (diffError) Error() string { return "exported API differs" }

func run(oldPkg, newPkg, allowFile, goos string, verbose bool) error {
	if allowFile == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		allowFile = filepath.Join(root, "scripts", "apidiff", "allowed-extra.txt")
	}
	allowed, err := readAllowlist(allowFile)
	if err != nil {
		return err
	}

	pkgs, err := load(goos, oldPkg, newPkg)
	if err != nil {
		return err
	}
	oldAPI := describe(pkgs[oldPkg])
	newAPI := describe(pkgs[newPkg])

	if verbose {
		fmt.Printf("## %s (%d)\n", oldPkg, len(oldAPI))
		for _, l := range oldAPI {
			fmt.Println("  " + l)
		}
		fmt.Printf("## %s (%d)\n", newPkg, len(newAPI))
		for _, l := range newAPI {
			fmt.Println("  " + l)
		}
		fmt.Println()
	}

	oldSet := toSet(oldAPI)
	newSet := toSet(newAPI)
	var lines []diffLine
	var allowedUsed []string
	for _, l := range oldAPI {
		if !newSet[l] {
			lines = append(lines, diffLine{'-', l})
		}
	}
	for _, l := range newAPI {
		if oldSet[l] {
			continue
		}
		if allowed[l] {
			allowedUsed = append(allowedUsed, l)
			continue
		}
		lines = append(lines, diffLine{'+', l})
	}
	// Group a changed identifier's "-" and "+" lines together.
	sort.SliceStable(lines, func(i, j int) bool {
		ki, kj := subject(lines[i].text), subject(lines[j].text)
		if ki != kj {
			return ki < kj
		}
		if lines[i].op != lines[j].op {
			return lines[i].op == '-'
		}
		return lines[i].text < lines[j].text
	})

	for l := range allowed {
		if !newSet[l] || oldSet[l] {
			fmt.Fprintf(os.Stderr, "apidiff: warning: stale allowlist entry in %s: %s\n", allowFile, l)
		}
	}
	if verbose && len(allowedUsed) > 0 {
		fmt.Printf("allowed extras (%s):\n", allowFile)
		for _, l := range allowedUsed {
			fmt.Println("  " + l)
		}
	}

	if len(lines) == 0 {
		extra := ""
		if len(allowedUsed) > 0 {
			extra = fmt.Sprintf(", plus %d allowed extra", len(allowedUsed))
		}
		fmt.Printf("exported API identical to upstream (%d identifiers%s)\n", len(oldAPI), extra)
		return nil
	}

	nMinus, nPlus := 0, 0
	fmt.Printf("--- %s (GOOS=%s)\n", oldPkg, goos)
	fmt.Printf("+++ %s (GOOS=%s)\n", newPkg, goos)
	for _, d := range lines {
		fmt.Printf("%c%s\n", d.op, d.text)
		if d.op == '-' {
			nMinus++
		} else {
			nPlus++
		}
	}
	fmt.Printf("exported API differs from upstream: %d missing (-), %d extra (+)\n", nMinus, nPlus)
	if nPlus > 0 {
		fmt.Printf("(an intended extra can be listed, line for line, in %s)\n", allowFile)
	}
	return diffError{}
}

// subject is the part of a line that names the identifier: its kind and
// qualified name (and receiver, for methods of concrete types).
func subject(line string) string {
	n := 2
	if strings.HasPrefix(line, "method (") {
		n = 3
	}
	f := strings.Fields(line)
	if len(f) > n {
		f = f[:n]
	}
	s := strings.Join(f, " ")
	if i := strings.IndexAny(s, "[("); i > 0 && !strings.HasPrefix(line, "method (") {
		s = s[:i] // generic parameters or a signature glued to the name
	}
	return s
}

type diffLine struct {
	op   byte
	text string
}

func toSet(lines []string) map[string]bool {
	s := make(map[string]bool, len(lines))
	for _, l := range lines {
		s[l] = true
	}
	return s
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module; run from the evictkit checkout or pass -allow")
	}
	return filepath.Dir(gomod), nil
}

func readAllowlist(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("allowlist: %w", err)
	}
	defer f.Close()
	allowed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		allowed[l] = true
	}
	return allowed, sc.Err()
}

// load builds the named packages and their dependencies for goos with
// `go list -export` and imports them from their export data.
func load(goos string, paths ...string) (map[string]*types.Package, error) {
	args := append([]string{"list", "-e", "-export", "-deps",
		"-json=ImportPath,Export,Error,DepsErrors"}, paths...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	runErr := cmd.Run()

	type listErr struct{ Err string }
	type listPkg struct {
		ImportPath string
		Export     string
		Error      *listErr
		DepsErrors []*listErr
	}
	exports := map[string]string{}
	var problems []string
	dec := json.NewDecoder(&stdout)
	for {
		var p listPkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decoding go list output: %v", err)
		}
		exports[p.ImportPath] = p.Export
		if p.Error != nil {
			problems = append(problems, p.Error.Err)
		}
	}
	for _, want := range paths {
		if exports[want] == "" {
			problems = append(problems, "no export data for "+want)
		}
	}
	if runErr != nil || len(problems) > 0 {
		msg := strings.TrimSpace(stderr.String())
		if len(problems) > 0 {
			msg = strings.TrimSpace(msg + "\n" + strings.Join(problems, "\n"))
		}
		return nil, fmt.Errorf("go list -export (GOOS=%s) failed; does the package build?\n%s", goos, msg)
	}

	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
	pkgs := map[string]*types.Package{}
	for _, path := range paths {
		p, err := imp.Import(path)
		if err != nil {
			return nil, fmt.Errorf("importing %s: %v", path, err)
		}
		pkgs[path] = p
	}
	return pkgs, nil
}

// normPath maps our module's packages onto upstream's so that both eviction
// packages (and any subpackage of ours, such as eviction/api) print alike.
func normPath(path string) string {
	if strings.HasPrefix(path, oursModule) {
		path = upstreamModule + strings.TrimPrefix(path, oursModule)
	}
	return path
}

// describe returns one sorted line per exported identifier of pkg.
func describe(pkg *types.Package) []string {
	w := &writer{self: pkg}
	var out []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		q := "eviction." + name
		switch obj := obj.(type) {
		case *types.Const:
			out = append(out, fmt.Sprintf("const %s %s = %s", q, w.typ(obj.Type()), obj.Val().ExactString()))
		case *types.Var:
			out = append(out, fmt.Sprintf("var %s %s", q, w.typ(obj.Type())))
		case *types.Func:
			sig := obj.Type().(*types.Signature)
			out = append(out, fmt.Sprintf("func %s%s%s", q, w.tparams(sig.TypeParams()), w.sig(sig)))
		case *types.TypeName:
			out = append(out, w.typeDecl(q, obj)...)
		default:
			out = append(out, fmt.Sprintf("%T %s", obj, q))
		}
	}
	sort.Strings(out)
	return out
}

func (w *writer) typeDecl(q string, obj *types.TypeName) []string {
	if obj.IsAlias() {
		tp := ""
		if a, ok := obj.Type().(*types.Alias); ok {
			tp = w.tparams(a.TypeParams())
		}
		return []string{fmt.Sprintf("type %s%s = %s", q, tp, w.typ(types.Unalias(obj.Type())))}
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		return []string{fmt.Sprintf("type %s %s", q, w.typ(obj.Type()))}
	}
	tp := w.tparams(named.TypeParams())
	var out []string
	switch u := named.Underlying().(type) {
	case *types.Struct:
		out = append(out, fmt.Sprintf("type %s%s struct", q, tp))
		hidden := false
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			if !f.Exported() {
				hidden = true
				continue
			}
			line := fmt.Sprintf("field %s.%s %s", q, f.Name(), w.typ(f.Type()))
			if f.Embedded() {
				line = fmt.Sprintf("field %s.%s embedded %s", q, f.Name(), w.typ(f.Type()))
			}
			if tag := u.Tag(i); tag != "" {
				line += " " + fmt.Sprintf("%q", tag)
			}
			out = append(out, line)
		}
		if hidden {
			out = append(out, fmt.Sprintf("field %s has unexported fields", q))
		}
	case *types.Interface:
		out = append(out, fmt.Sprintf("type %s%s interface", q, tp))
		hidden := false
		for i := 0; i < u.NumMethods(); i++ {
			m := u.Method(i)
			if !m.Exported() {
				hidden = true
				continue
			}
			out = append(out, fmt.Sprintf("method %s.%s%s", q, m.Name(), w.sig(m.Type().(*types.Signature))))
		}
		// Type terms of a constraint interface (methods are listed above).
		for i := 0; i < u.NumEmbeddeds(); i++ {
			if _, isIface := u.EmbeddedType(i).Underlying().(*types.Interface); !isIface {
				out = append(out, fmt.Sprintf("constraint %s %s", q, w.typ(u.EmbeddedType(i))))
			}
		}
		if hidden {
			out = append(out, fmt.Sprintf("method %s has unexported methods", q))
		}
		return out // an interface's methods are its underlying type
	default:
		out = append(out, fmt.Sprintf("type %s%s %s", q, tp, w.typ(u)))
	}

	// Methods of T and *T, including those promoted from embedded fields.
	valueSet := types.NewMethodSet(named)
	ptrSet := types.NewMethodSet(types.NewPointer(named))
	for i := 0; i < ptrSet.Len(); i++ {
		sel := ptrSet.At(i)
		m := sel.Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		recv := "(*" + q + ")"
		if valueSet.Lookup(m.Pkg(), m.Name()) != nil {
			recv = "(" + q + ")"
		}
		out = append(out, fmt.Sprintf("method %s %s%s", recv, m.Name(), w.sig(sel.Type().(*types.Signature))))
	}
	return out
}

// writer prints types without parameter names, with package paths
// normalised and both eviction packages printed as "eviction".
type writer struct {
	self *types.Package
}

func (w *writer) qual(p *types.Package) string {
	if p == nil {
		return ""
	}
	path := normPath(p.Path())
	if p == w.self || path == upstreamPath {
		return "eviction"
	}
	return path
}

func (w *writer) typ(t types.Type) string {
	var b strings.Builder
	w.write(&b, t)
	return b.String()
}

func (w *writer) write(b *strings.Builder, t types.Type) {
	switch t := t.(type) {
	case nil:
		b.WriteString("<nil>")
	case *types.Basic:
		b.WriteString(t.Name())
	case *types.Pointer:
		b.WriteString("*")
		w.write(b, t.Elem())
	case *types.Slice:
		b.WriteString("[]")
		w.write(b, t.Elem())
	case *types.Array:
		fmt.Fprintf(b, "[%d]", t.Len())
		w.write(b, t.Elem())
	case *types.Map:
		b.WriteString("map[")
		w.write(b, t.Key())
		b.WriteString("]")
		w.write(b, t.Elem())
	case *types.Chan:
		switch t.Dir() {
		case types.SendRecv:
			b.WriteString("chan ")
		case types.SendOnly:
			b.WriteString("chan<- ")
		case types.RecvOnly:
			b.WriteString("<-chan ")
		}
		if c, ok := t.Elem().(*types.Chan); ok && c.Dir() == types.RecvOnly {
			b.WriteString("(")
			w.write(b, t.Elem())
			b.WriteString(")")
		} else {
			w.write(b, t.Elem())
		}
	case *types.Signature:
		b.WriteString("func")
		b.WriteString(w.sig(t))
	case *types.Struct:
		b.WriteString("struct{")
		for i := 0; i < t.NumFields(); i++ {
			if i > 0 {
				b.WriteString("; ")
			}
			f := t.Field(i)
			if !f.Embedded() {
				b.WriteString(f.Name())
				b.WriteString(" ")
			}
			w.write(b, f.Type())
			if tag := t.Tag(i); tag != "" {
				fmt.Fprintf(b, " %q", tag)
			}
		}
		b.WriteString("}")
	case *types.Interface:
		if t.IsImplicit() && t.NumEmbeddeds() == 1 {
			w.write(b, t.EmbeddedType(0)) // [S ~[]E] is written without interface{}
			return
		}
		b.WriteString("interface{")
		first := true
		sep := func() {
			if !first {
				b.WriteString("; ")
			}
			first = false
		}
		for i := 0; i < t.NumEmbeddeds(); i++ {
			sep()
			w.write(b, t.EmbeddedType(i))
		}
		for i := 0; i < t.NumExplicitMethods(); i++ {
			sep()
			m := t.ExplicitMethod(i)
			b.WriteString(m.Name())
			b.WriteString(w.sig(m.Type().(*types.Signature)))
		}
		b.WriteString("}")
	case *types.Union:
		for i := 0; i < t.Len(); i++ {
			if i > 0 {
				b.WriteString(" | ")
			}
			term := t.Term(i)
			if term.Tilde() {
				b.WriteString("~")
			}
			w.write(b, term.Type())
		}
	case *types.Tuple:
		b.WriteString(w.tuple(t, false))
	case *types.TypeParam:
		b.WriteString(t.Obj().Name())
	case *types.Alias:
		w.named(b, t.Obj(), t.TypeArgs())
	case *types.Named:
		w.named(b, t.Obj(), t.TypeArgs())
	default:
		b.WriteString(types.TypeString(t, w.qual))
	}
}

func (w *writer) named(b *strings.Builder, obj *types.TypeName, args *types.TypeList) {
	if q := w.qual(obj.Pkg()); q != "" {
		b.WriteString(q)
		b.WriteString(".")
	}
	b.WriteString(obj.Name())
	if args.Len() > 0 {
		b.WriteString("[")
		for i := 0; i < args.Len(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			w.write(b, args.At(i))
		}
		b.WriteString("]")
	}
}

func (w *writer) tparams(list *types.TypeParamList) string {
	if list.Len() == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < list.Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		tp := list.At(i)
		b.WriteString(tp.Obj().Name())
		b.WriteString(" ")
		w.write(&b, tp.Constraint())
	}
	b.WriteString("]")
	return b.String()
}

// sig prints a signature's parameters and results, without "func" and
// without parameter names.
func (w *writer) sig(s *types.Signature) string {
	params := w.tuple(s.Params(), s.Variadic())
	switch s.Results().Len() {
	case 0:
		return params
	case 1:
		return params + " " + w.typ(s.Results().At(0).Type())
	default:
		return params + " " + w.tuple(s.Results(), false)
	}
}

func (w *writer) tuple(t *types.Tuple, variadic bool) string {
	var b strings.Builder
	b.WriteString("(")
	for i := 0; i < t.Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		typ := t.At(i).Type()
		if variadic && i == t.Len()-1 {
			if sl, ok := typ.(*types.Slice); ok {
				b.WriteString("...")
				typ = sl.Elem()
			}
		}
		w.write(&b, typ)
	}
	b.WriteString(")")
	return b.String()
}
