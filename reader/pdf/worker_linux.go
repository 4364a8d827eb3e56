package pdf

import (
	"os/exec"
	"syscall"
)

// childAttrs has the kernel kill the child when searxgate's thread that
// started it ends, so no worker outlives a searxgate that was killed.
func childAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

func selfExe() string { return "/proc/self/exe" }
