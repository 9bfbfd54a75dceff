//go:build !linux

package media

import "os/exec"

// runTied runs cmd. Only Linux can have a child killed when its parent
// dies; elsewhere a child of a killed run ends with its own work, and the
// partial file it leaves is removed by the next run (CleanPartials).
func runTied(cmd *exec.Cmd) error { return cmd.Run() }
