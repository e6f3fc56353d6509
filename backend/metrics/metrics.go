// Package metrics is agentdesk's Prometheus metrics (--metrics-addr): the HTTP requests
// by route template, the single writer, the event stream, the background work and the
// webhook deliveries. Each server has its own registry, served on its own listener,
// never on the main port. docs/metrics.md lists the series.
package metrics

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Metrics holds one server's collectors. A nil *Metrics records nothing, so callers
// need not check whether metrics are on.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	batchWrites     prometheus.Histogram
	commitDuration  prometheus.Histogram
	workRuns        *prometheus.CounterVec
	jobRuns         *prometheus.CounterVec
	deliveries      *prometheus.CounterVec
	deliveryTime    prometheus.Histogram
}

// Sources are what the gauges read at each scrape.
type Sources struct {
	QueueDepth func() int                                       // writes waiting for the writer
	Streams    func() (subscribers, replays int)                // the event hub
	WebhookLag func(ctx context.Context) (time.Duration, error) // the oldest undelivered event's age
}

// New makes the collectors and registers them, with the Go runtime's and the process's.
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentdesk_http_requests_total",
		Help: "HTTP requests answered, by method, route template (unmatched: no route) and status class.",
	}, []string{"method", "route", "status"})
	m.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agentdesk_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by method and route template (WebSocket upgrades are not timed: they last as long as the connection).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"method", "route"})
	m.batchWrites = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "agentdesk_writer_batch_writes",
		Help:    "Writes committed together in one transaction by the single writer (group commit).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
	m.commitDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "agentdesk_writer_commit_duration_seconds",
		Help:    "Time the writer's COMMIT of a batch took.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	})
	m.workRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentdesk_background_runs_total",
		Help: "Passes of the periodic background work, by what it is and outcome (ok or error).",
	}, []string{"work", "outcome"})
	m.jobRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentdesk_job_runs_total",
		Help: "Runs of scheduled jobs, by outcome (created, failed, skipped).",
	}, []string{"outcome"})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentdesk_webhook_deliveries_total",
		Help: "Webhook delivery attempts, by outcome: success (2xx), failure (another status), error (no answer).",
	}, []string{"outcome"})
	m.deliveryTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "agentdesk_webhook_delivery_duration_seconds",
		Help:    "Time a webhook receiver took to answer a delivery.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	m.reg.MustRegister(m.requests, m.requestDuration, m.batchWrites, m.commitDuration,
		m.workRuns, m.jobRuns, m.deliveries, m.deliveryTime,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, jobOutcome := range []string{model.RunCreated, model.RunFailed, model.RunSkipped} {
		m.jobRuns.WithLabelValues(jobOutcome) // present at 0 from the start
	}
	for _, o := range []string{"success", "failure", "error"} {
		m.deliveries.WithLabelValues(o)
	}
	if src.QueueDepth != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentdesk_writer_queue_depth",
			Help: "Writes waiting for the single writer.",
		}, func() float64 { return float64(src.QueueDepth()) }))
	}
	if src.Streams != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentdesk_event_subscribers",
			Help: "Subscribers following live events (event stream and GraphQL subscriptions), every project.",
		}, func() float64 { n, _ := src.Streams(); return float64(n) }))
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentdesk_event_replays_in_progress",
			Help: "?since= replays of the stored event log running now.",
		}, func() float64 { _, n := src.Streams(); return float64(n) }))
	}
	if src.WebhookLag != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentdesk_webhook_delivery_lag_seconds",
			Help: "Age of the oldest event an enabled webhook has still to be sent (0: all delivered).",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			lag, err := src.WebhookLag(ctx)
			if err != nil {
				return -1 // unknown; the read failed
			}
			return lag.Seconds()
		}))
	}
	return m
}

// Handler serves the registry in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Request records one answered HTTP request. route is gin's route template ("" for no
// route), so the series stay few whatever the paths asked; upgraded connections are
// counted but not timed.
func (m *Metrics) Request(method, route string, status int, took time.Duration, upgraded bool) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	switch method { // a client may send any method: only the known ones become labels
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		method = "other"
	}
	m.requests.WithLabelValues(method, route, statusClass(status)).Inc()
	if !upgraded {
		m.requestDuration.WithLabelValues(method, route).Observe(took.Seconds())
	}
}

func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

// Batch records a batch the writer committed (store.Options.OnBatch).
func (m *Metrics) Batch(writes int, commit time.Duration) {
	if m == nil {
		return
	}
	m.batchWrites.Observe(float64(writes))
	m.commitDuration.Observe(commit.Seconds())
}

// Committed counts the scheduled jobs' runs in committed events (store.Options.OnCommit).
func (m *Metrics) Committed(evs []model.Event) {
	if m == nil {
		return
	}
	for _, e := range evs {
		if e.Type != "job.ran" {
			continue
		}
		var counts map[string]any
		switch d := e.Data.(type) {
		case map[string]any:
			counts = d
		case json.RawMessage:
			_ = json.Unmarshal(d, &counts)
		case []byte:
			_ = json.Unmarshal(d, &counts)
		}
		for _, o := range []string{model.RunCreated, model.RunFailed, model.RunSkipped} {
			if n := number(counts[o]); n > 0 {
				m.jobRuns.WithLabelValues(o).Add(n)
			}
		}
	}
}

func number(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// Work records a pass of the periodic background work (jobs.Options.OnRun).
func (m *Metrics) Work(what string, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.workRuns.WithLabelValues(what, outcome).Inc()
}

// Delivery records a webhook delivery attempt (service.Options.OnWebhookDelivery).
func (m *Metrics) Delivery(d model.WebhookDelivery) {
	if m == nil {
		return
	}
	switch {
	case d.OK():
		m.deliveries.WithLabelValues("success").Inc()
	case d.Status != nil:
		m.deliveries.WithLabelValues("failure").Inc()
	default:
		m.deliveries.WithLabelValues("error").Inc()
	}
	m.deliveryTime.Observe(float64(d.DurationMS) / 1000)
}
