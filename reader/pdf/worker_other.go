//go:build !linux

package pdf

import (
	"os"
	"os/exec"
)

func childAttrs(cmd *exec.Cmd) {}

func selfExe() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}
