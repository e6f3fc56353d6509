package main

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// fanout opens n WebSocket subscribers, makes `events` task changes at a steady rate,
// and measures, for every delivery to every subscriber, the time from the event's
// commit timestamp (`at`, taken by the server as the write starts, so it includes the
// commit) to its arrival. It returns p50 and p99 in ms, and the servers' CPU time per
// delivery in µs (the creates' own included: a few percent of it). The subscribers
// follow with streamTokens (a credential holds a limited number of sockets); token
// makes the changes.
func (l *loader) fanout(n, events int, rate float64, token string, streamTokens []string) (p50, p99, cpuPerDelivery float64, err error) {
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		// With two servers, half the subscribers follow the other one: the events made
		// through a server reach the other's subscribers by its NOTIFY.
		url := strings.Replace(l.baseOf(i), "http://", "ws://", 1) + "/api/events"
		header := http.Header{"Authorization": {"Bearer " + streamTokens[i*len(streamTokens)/n]}}
		c, _, err := websocket.DefaultDialer.Dial(url, header)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("subscriber %d: %w", i, err)
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	var mu sync.Mutex
	lat := make([]float64, 0, n*events)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]float64, 0, events)
			c.SetReadDeadline(time.Now().Add(time.Duration(float64(events)/rate*float64(time.Second)) + 30*time.Second))
			for len(mine) < events {
				_, raw, err := c.ReadMessage()
				if err != nil {
					break
				}
				arrived := time.Now()
				if at, ok := eventAt(raw); ok {
					mine = append(mine, float64(arrived.Sub(at).Microseconds())/1000)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	time.Sleep(200 * time.Millisecond) // every subscriber is registered
	serversCPU := func() (d time.Duration) {
		for _, s := range l.servers {
			d += s.cpu()
		}
		return d
	}
	cpuBefore := serversCPU()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	for i := range events {
		<-tick.C
		if err := l.do("POST", "/api/tasks", token, fmt.Appendf(nil, `{"summary":"fan-out %d"}`, i), http.StatusCreated); err != nil {
			tick.Stop()
			return 0, 0, 0, err
		}
	}
	tick.Stop()
	wg.Wait()
	cpuPerDelivery = float64((serversCPU() - cpuBefore).Microseconds()) / float64(n*events)
	if len(lat) < n*events {
		return 0, 0, 0, fmt.Errorf("only %d of %d deliveries arrived", len(lat), n*events)
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], cpuPerDelivery, nil
}

// eventAt is the "at" of an event's JSON. It reads only that field: decoding the whole
// event (the task in its data) for each of a thousand subscribers took as much CPU as
// the server's sending it, on the cores the two share. An event's "at" comes before
// its data, so the first "at" key is the event's own.
func eventAt(raw []byte) (time.Time, bool) {
	_, rest, ok := bytes.Cut(raw, []byte(`"at":"`))
	if !ok {
		return time.Time{}, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	return at, err == nil
}
