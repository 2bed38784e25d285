package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandGroups checks that every command of kernelkit belongs to one
// of the help groups (a new command needs its entry in commandGroup) and
// that "kernelkit --help" lists the groups in their order.
func TestCommandGroups(t *testing.T) {
	root := newRoot()
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.GroupID == "" {
			t.Errorf("command %q has no help group: add it to commandGroup in root.go", c.Name())
		}
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	last := -1
	for _, g := range commandGroups {
		i := strings.Index(help, g.Title)
		if i < 0 || i < last {
			t.Fatalf("--help lists group %q out of order or not at all:\n%s", g.Title, help)
		}
		last = i
	}
	for _, name := range []string{"fit", "predict", "transform", "attention", "train", "serve"} {
		if !strings.Contains(help, "\n  "+name+" ") {
			t.Errorf("--help does not list %q:\n%s", name, help)
		}
	}
}
