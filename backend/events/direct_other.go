//go:build !unix

package events

import "net"

// nonBlockingWriter is nil where sockets are not Unix file descriptors (Windows): every
// event goes through the socket's goroutine.
func nonBlockingWriter(net.Conn) writeNowFunc { return nil }
