// Command searxgate answers SearXNG searches from a pool of public SearXNG
// instances.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "searxgate: serving is not built yet")
	os.Exit(1)
}
