package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/resourcedir/resourcedir"
)

// runGenerate is `resourcedir generate -n N [-rand-seed S]`.
func runGenerate(args []string, stdout, stderr io.Writer) error {
	fs := newSubcommand("generate", "usage: resourcedir generate -n N [-rand-seed S] > seed.json\n\n"+
		"Writes N realistic resources as a seed file (the POST /__admin/resources format) to standard output.")
	n := fs.Int("n", 0, "how many resources to write (at least 1)")
	seed := fs.Uint64("rand-seed", 1, "the same `seed` gives the same resources")
	if err := parseSubcommand(fs, args, 0, stderr); err != nil {
		return fmt.Errorf("generate: %w", err) // flag.ErrHelp included: Main tells it by errors.Is
	}
	if *n < 1 {
		return errors.New("generate: -n must be at least 1: how many resources to write")
	}
	return resourcedir.GenerateSeed(stdout, *n, *seed)
}
