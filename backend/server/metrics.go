package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/agentdesk/agentdesk/backend/metrics"
)

// metricsServer serves GET /metrics on its own listener (--metrics-addr), so that the
// main port, which may face the network behind a proxy, never shows them.
type metricsServer struct {
	http *http.Server
	ln   net.Listener
}

func startMetrics(addr string, m *metrics.Metrics) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics (--metrics-addr): %w", listenError(addr, err))
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	ms := &metricsServer{ln: ln, http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go ms.http.Serve(ln) //nolint:errcheck // ends with close
	return ms, nil
}

// MetricsURL is the metrics endpoint's address ("" when metrics are off).
func (s *Server) MetricsURL() string {
	if s.metrics == nil {
		return ""
	}
	return "http://" + s.metrics.ln.Addr().String() + "/metrics"
}

func (ms *metricsServer) close() {
	if ms == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = ms.http.Shutdown(ctx)
}
