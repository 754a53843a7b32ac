package main

import (
	"bytes"
	"context"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// gremlins decides that no test reaches a mutant from Go's coverage
// profile, which counts no case expression of a switch and no constant
// declaration, so mutants there are reported NOT COVERED although tests
// run them. recheck runs the package's tests on each such mutant itself.

// replacements are gremlins' mutators, token by token.
var replacements = map[string]map[token.Token]token.Token{
	"CONDITIONALS_BOUNDARY": {token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR},
	"CONDITIONALS_NEGATION": {token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ, token.LEQ: token.GTR, token.GTR: token.LEQ, token.GEQ: token.LSS},
	"ARITHMETIC_BASE":       {token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL},
	"INCREMENT_DECREMENT":   {token.INC: token.DEC, token.DEC: token.INC},
	"INVERT_NEGATIVES":      {token.SUB: token.ADD},
}

// mutate returns src with the operator at line:col replaced as kind does.
func mutate(src []byte, line, col int, kind string) ([]byte, error) {
	repl, ok := replacements[kind]
	if !ok {
		return nil, fmt.Errorf("mutator %s: not one recheck knows", kind)
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return nil, fmt.Errorf("no token at %d:%d", line, col)
		}
		p := fset.Position(pos)
		if p.Line != line || p.Column != col {
			continue
		}
		to, ok := repl[tok]
		if !ok {
			return nil, fmt.Errorf("%d:%d: %s has no %s mutation", line, col, tok, kind)
		}
		off := p.Offset
		out := append([]byte{}, src[:off]...)
		out = append(out, to.String()...)
		return append(out, src[off+len(tok.String()):]...), nil
	}
}

// recheck runs the tests of pkg (a directory of module src) on every NOT
// COVERED mutant of all and sets its status to what that run shows:
// KILLED, LIVED, or NOT VIABLE when the mutant does not build. The
// source files are restored whatever happens.
func recheck(all []mutant, src, pkg string, timeout time.Duration, progress func(string)) error {
	for i := range all {
		m := &all[i]
		if m.status != "NOT COVERED" {
			continue
		}
		path := filepath.Join(src, pkg, m.file)
		orig, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		mutated, err := mutate(orig, m.line, m.col, m.kind)
		if err != nil {
			return fmt.Errorf("%s: %w", m.key(), err)
		}
		if err := os.WriteFile(path, mutated, 0o644); err != nil {
			return err
		}
		status, err := runTests(src, pkg, timeout)
		if rerr := os.WriteFile(path, orig, 0o644); rerr != nil {
			return rerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m.key(), err)
		}
		m.status, m.rechecked = status, true
		progress(fmt.Sprintf("recheck %s: %s", m.key(), status))
	}
	return nil
}

// runTests builds and runs the tests of pkg in module src: KILLED when
// they fail or time out, LIVED when they pass, NOT VIABLE when they do not
// build.
func runTests(src, pkg string, timeout time.Duration) (string, error) {
	vet := exec.Command("go", "test", "-count=1", "-run", "^$", "./"+pkg)
	vet.Dir = src
	if out, err := vet.CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")) {
			return "NOT VIABLE", nil
		}
		return "", fmt.Errorf("go test -run ^$: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "./"+pkg)
	cmd.Dir = src
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); ok || ctx.Err() != nil {
			return "KILLED", nil
		}
		return "", err
	}
	return "LIVED", nil
}
