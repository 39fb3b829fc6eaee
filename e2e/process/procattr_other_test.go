//go:build !linux

package process

import "os/exec"

func setProcAttr(*exec.Cmd) {}
