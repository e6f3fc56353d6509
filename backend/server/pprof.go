package server

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// startProfiler serves Go's profiler on the loopback address in AGENTDESK_PPROF (e.g.
// 127.0.0.1:6060), for measuring where the server's time goes under `make bench`. It is
// off unless asked for, and refuses any address that is not loopback: profiles show
// request data.
func startProfiler() error {
	addr := os.Getenv("AGENTDESK_PPROF")
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("AGENTDESK_PPROF=%q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("AGENTDESK_PPROF=%q: the profiler listens on a loopback IP only, e.g. 127.0.0.1:6060", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("AGENTDESK_PPROF: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	slog.Info("profiler is listening", "url", "http://"+addr+"/debug/pprof/")
	go func() { _ = http.Serve(ln, mux) }()
	return nil
}
