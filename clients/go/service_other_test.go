//go:build !linux

package errorclass

import "os/exec"

// dieWithTest: only Linux has a parent-death signal; elsewhere TestMain stops the server.
func dieWithTest(*exec.Cmd) {}
