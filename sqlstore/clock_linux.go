package sqlstore

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// bootID names this boot of the host.
func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if os.IsNotExist(err) {
		return "", errNoBootClock
	}
	if err != nil {
		return "", fmt.Errorf("reading the boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// bootClock returns the host's boot clock, in nanoseconds: it counts time
// asleep, and no step of the wall clock moves it.
func bootClock() (int64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, fmt.Errorf("reading the boot clock: %w", err)
	}
	return ts.Nano(), nil
}
