// Command resourcedir is a local, in-memory stand-in for the Resource
// Directory API (/api/v2/resource), with snapshot persistence and
// test-double controls under /__admin/. Run it with -help for its flags and
// subcommands; the server itself is the package
// github.com/resourcedir/resourcedir.
package main

import (
	"os"

	"github.com/resourcedir/resourcedir"
)

func main() { os.Exit(resourcedir.Main()) }
