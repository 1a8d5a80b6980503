package linkem

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openTAP creates a TAP device (Ethernet frames, no packet-info header) in
// the caller's namespace and returns its fd, non-blocking so that Go's poller
// serves reads and Close unblocks them. The device lives as long as the fd:
// closing it removes the device, wherever it has been moved since.
func openTAP(name string) (*os.File, string, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", fmt.Errorf("open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, "", fmt.Errorf("tap name %q: %w", name, err)
	}
	ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, "", fmt.Errorf("create tap %q (TUNSETIFF): %w", name, err)
	}
	got := ifr.Name()
	return os.NewFile(uintptr(fd), "tap:"+got), got, nil
}
