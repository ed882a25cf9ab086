package main

import (
	"bytes"
	"context"
	"testing"
)

func TestGenerateUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{nil, "generate: -n must be at least 1: how many resources to write"},
		{[]string{"-n", "0"}, "generate: -n must be at least 1: how many resources to write"},
		{[]string{"-n", "3", "extra"}, `generate: unexpected argument "extra"`},
		{[]string{"-n", "x"}, `generate: invalid value "x" for flag -n: parse error`},
		{[]string{"-rand-seed", "-1", "-n", "2"}, `generate: invalid value "-1" for flag -rand-seed: parse error`},
		// -seed is the server's seed file, never an integer.
		{[]string{"-n", "2", "-seed", "people.json"}, "generate: -seed is the server's seed file; this subcommand's integer seed is -rand-seed"},
		{[]string{"-n", "2", "-nn", "3"}, "generate: unknown flag -nn; did you mean -n? (resourcedir generate -help lists every flag)"},
	}
	for _, tt := range tests {
		// The error is all: Main prints it, once; nothing else is written.
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{"generate"}, tt.args...), nil, &out, &errOut)
		if err == nil || err.Error() != tt.want || out.Len() != 0 || errOut.Len() != 0 {
			t.Errorf("generate %q: %v, stdout %q, stderr %q; want %s alone", tt.args, err, out.Bytes(), errOut.Bytes(), tt.want)
		}
	}
}

// genRun runs `resourcedir generate args...` and returns its output.
func genRun(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append([]string{"generate"}, args...), nil, &out, &errOut); err != nil {
		t.Fatalf("generate %q: %v; stderr %s", args, err, errOut.Bytes())
	}
	return out.Bytes()
}
