//go:build unix

package events

import (
	"net"
	"syscall"
)

// nonBlockingWriter is a writeNowFunc of conn, or nil when conn is not a socket (then
// every event goes through the goroutine).
func nonBlockingWriter(conn net.Conn) writeNowFunc {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func(b []byte) int {
		n := 0
		// Go's sockets are non-blocking: write(2) takes what fits and never sleeps.
		// Returning true tells the runtime not to wait for room. A passed write deadline
		// fails the call before it writes.
		err := raw.Write(func(fd uintptr) bool {
			n, _ = syscall.Write(int(fd), b)
			return true
		})
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
}
