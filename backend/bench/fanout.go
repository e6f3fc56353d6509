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

// fanoutResult is one run of the fan-out phase: p50 and p99 in ms of each delivery's
// time from the create's answer (the figure: the client got its 201, then each
// subscriber its event; negative when the event came first), the same from the event's
// "at" (taken by the server as the write starts, so it includes the commit and the
// fsync: what the phase reported before), and the servers' and this process's CPU time
// per delivery in µs (the creates' own included: a few percent of it). The two share
// the machine's cores: a thousand deliveries cannot all arrive sooner than their CPU
// time over the cores (benchCPUPerDelivery is the receiving side: a wake-up, a read,
// the frame's parsing).
type fanoutResult struct {
	p50, p99            float64 // from the create's answer
	p50At, p99At        float64 // from the event's "at"
	createP50           float64 // the creates' own round trips, ms
	cpuPerDelivery      float64
	benchCPUPerDelivery float64
	early, deliveries   int // deliveries that arrived before their create's answer, and all
}

// fanout opens n WebSocket subscribers, makes `events` creates at a steady rate, and
// times every delivery to every subscriber. The creates' summaries are "fan-out I": I
// is the key that pairs each receipt with its create's answer, read from the event's
// bytes without decoding it (fanoutKey). The subscribers follow with streamTokens (a
// credential holds a limited number of sockets); token makes the creates.
func (l *loader) fanout(n, events int, rate float64, token string, streamTokens []string) (res fanoutResult, err error) {
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		// With two servers, half the subscribers follow the other one: the events made
		// through a server reach the other's subscribers by its NOTIFY.
		url := strings.Replace(l.baseOf(i), "http://", "ws://", 1) + "/api/events"
		header := http.Header{"Authorization": {"Bearer " + streamTokens[i*len(streamTokens)/n]}}
		c, _, err := websocket.DefaultDialer.Dial(url, header)
		if err != nil {
			return res, fmt.Errorf("subscriber %d: %w", i, err)
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	// arrived[s][i]: when subscriber s received the event of create i (zero: not yet).
	// Every subscriber gets the same event, so its "at" is read once, by subscriber 0.
	arrived := make([][]time.Time, n)
	ats := make([]time.Time, events)
	var wg sync.WaitGroup
	for s, c := range conns {
		mine := make([]time.Time, events)
		arrived[s] = mine
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(time.Duration(float64(events)/rate*float64(time.Second)) + 30*time.Second))
			for got := 0; got < events; {
				_, raw, err := c.ReadMessage()
				if err != nil {
					return
				}
				now := time.Now()
				i, ok := fanoutKey(raw)
				if !ok || i >= events || !mine[i].IsZero() {
					continue
				}
				mine[i] = now
				got++
				if s == 0 {
					ats[i], _ = eventAt(raw)
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // every subscriber is registered
	serversCPU := func() (d time.Duration) {
		for _, s := range l.servers {
			d += s.cpu()
		}
		return d
	}
	cpuBefore, benchBefore := serversCPU(), selfCPU()
	answered := make([]time.Time, events)
	roundTrips := make([]float64, events)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	for i := range events {
		<-tick.C
		sent := time.Now()
		if err := l.do("POST", "/api/tasks", token, fmt.Appendf(nil, `{"summary":"fan-out %d"}`, i), http.StatusCreated); err != nil {
			tick.Stop()
			return res, err
		}
		answered[i] = time.Now()
		roundTrips[i] = ms(answered[i].Sub(sent))
	}
	tick.Stop()
	wg.Wait()
	res.cpuPerDelivery = float64((serversCPU() - cpuBefore).Microseconds()) / float64(n*events)
	res.benchCPUPerDelivery = float64((selfCPU() - benchBefore).Microseconds()) / float64(n*events)

	slices.Sort(roundTrips)
	res.createP50 = roundTrips[len(roundTrips)/2]
	fromAnswer := make([]float64, 0, n*events)
	fromAt := make([]float64, 0, n*events)
	for _, mine := range arrived {
		for i, t := range mine {
			if t.IsZero() {
				continue
			}
			d := t.Sub(answered[i])
			if d < 0 {
				res.early++
			}
			fromAnswer = append(fromAnswer, ms(d))
			if !ats[i].IsZero() {
				fromAt = append(fromAt, ms(t.Sub(ats[i])))
			}
		}
	}
	res.deliveries = len(fromAnswer)
	if len(fromAnswer) < n*events || len(fromAt) < n*events {
		return res, fmt.Errorf("only %d of %d deliveries arrived (%d with their at)", len(fromAnswer), n*events, len(fromAt))
	}
	slices.Sort(fromAnswer)
	slices.Sort(fromAt)
	res.p50, res.p99 = fromAnswer[len(fromAnswer)/2], fromAnswer[len(fromAnswer)*99/100]
	res.p50At, res.p99At = fromAt[len(fromAt)/2], fromAt[len(fromAt)*99/100]
	return res, nil
}

// fanoutKey is the I of the "fan-out I" summary in an event's bytes. Like eventAt, it
// reads only what it needs: the summary is in the event's data, the task, and nothing
// else in a fan-out create's event holds its text.
func fanoutKey(raw []byte) (int, bool) {
	_, rest, ok := bytes.Cut(raw, []byte(`"summary":"fan-out `))
	if !ok {
		return 0, false
	}
	i, digits := 0, 0
	for ; digits < len(rest) && digits < 9 && '0' <= rest[digits] && rest[digits] <= '9'; digits++ {
		i = i*10 + int(rest[digits]-'0')
	}
	return i, digits > 0 && digits < len(rest) && rest[digits] == '"'
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
