package errorclass

import (
	"os/exec"
	"syscall"
)

// dieWithTest has the kernel kill the server if the test binary dies first (a panic, go
// test's -timeout), so no server outlives its tests.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
