package main

import (
	"encoding/json"
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
// commit) to its arrival. It returns p50 and p99 in ms. The subscribers follow with
// streamTokens (a credential holds a limited number of sockets); token makes the changes.
func (l *loader) fanout(n, events int, rate float64, token string, streamTokens []string) (p50, p99 float64, err error) {
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		// With two servers, half the subscribers follow the other one: the events made
		// through a server reach the other's subscribers by its NOTIFY.
		url := strings.Replace(l.baseOf(i), "http://", "ws://", 1) + "/api/events"
		header := http.Header{"Authorization": {"Bearer " + streamTokens[i*len(streamTokens)/n]}}
		c, _, err := websocket.DefaultDialer.Dial(url, header)
		if err != nil {
			return 0, 0, fmt.Errorf("subscriber %d: %w", i, err)
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
				var e struct{ At time.Time }
				if json.Unmarshal(raw, &e) == nil {
					mine = append(mine, float64(arrived.Sub(e.At).Microseconds())/1000)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	time.Sleep(200 * time.Millisecond) // every subscriber is registered
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	for i := range events {
		<-tick.C
		if err := l.do("POST", "/api/tasks", token, fmt.Appendf(nil, `{"summary":"fan-out %d"}`, i), http.StatusCreated); err != nil {
			tick.Stop()
			return 0, 0, err
		}
	}
	tick.Stop()
	wg.Wait()
	if len(lat) < n*events {
		return 0, 0, fmt.Errorf("only %d of %d deliveries arrived", len(lat), n*events)
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], nil
}
