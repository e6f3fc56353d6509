package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// On a 2-core machine the load generator, the servers and a local PostgreSQL share the
// cores, and the machine's speed moves by the hour (docs/performance.md). So a write
// phase also reports what the whole machine spent per request: CPU time (and whose),
// idle time, and context switches. Switches are a count, not a time: two runs in
// different spells can be compared on them, which requests per second cannot.

// machineSample is the machine's use up to a moment.
type machineSample struct {
	busy, idle time.Duration         // /proc/stat, all cores: busy (user, system, irq, steal) and idle
	switches   int64                 // /proc/stat ctxt: context switches since boot
	servers    time.Duration         // the CPU time of every agentdesk server of the run
	postgres   map[int]time.Duration // the CPU time of each process named postgres, by pid
}

// machineUse is what the machine spent during a phase, per successful request.
type machineUse struct {
	cpuUS, serversUS, postgresUS, loadgenUS float64 // CPU µs per request
	switches                                float64 // context switches per request
	idleShare                               float64 // the cores' idle share of the phase
	postgresSeen                            bool    // a local PostgreSQL ran during the phase
}

// sampleMachine samples the machine, the servers, and PostgreSQL's processes when the
// run is on PostgreSQL (withPostgres): they are found only where it runs on this machine.
func sampleMachine(servers []*server, withPostgres bool) machineSample {
	s := machineSample{postgres: map[int]time.Duration{}}
	if raw, err := os.ReadFile("/proc/stat"); err == nil {
		s.busy, s.idle, s.switches = parseProcStat(string(raw))
	}
	for _, srv := range servers {
		s.servers += srv.cpu()
	}
	if !withPostgres {
		return s
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it ended
		}
		if name, cpu, ok := parsePidStat(raw); ok && name == "postgres" {
			s.postgres[pid] = cpu
		}
	}
	return s
}

// use is what the machine spent between s and later, over n requests; loadgen is this
// process's CPU time over the same span.
func (s machineSample) use(later machineSample, loadgen time.Duration, n int64) machineUse {
	if n <= 0 {
		return machineUse{}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	var postgres time.Duration
	for pid, cpu := range later.postgres {
		postgres += cpu - s.postgres[pid] // a backend that started during the phase counts from 0
	}
	u := machineUse{
		cpuUS:        per(later.busy - s.busy),
		serversUS:    per(later.servers - s.servers),
		postgresUS:   per(postgres),
		loadgenUS:    per(loadgen),
		switches:     float64(later.switches-s.switches) / float64(n),
		postgresSeen: len(later.postgres) > 0,
	}
	if total := (later.busy - s.busy) + (later.idle - s.idle); total > 0 {
		u.idleShare = float64(later.idle-s.idle) / float64(total)
	}
	return u
}

func (u machineUse) String() string {
	pg := ""
	if u.postgresSeen {
		pg = fmt.Sprintf(", PostgreSQL %.0f", u.postgresUS)
	}
	return fmt.Sprintf("machine per request: CPU %.0f µs (servers %.0f%s, loadgen %.0f), %.1f context switches; cores %.0f%% idle",
		u.cpuUS, u.serversUS, pg, u.loadgenUS, u.switches, 100*u.idleShare)
}

// parseProcStat reads the first line of /proc/stat (all cores, in USER_HZ ticks) and
// its ctxt line.
func parseProcStat(raw string) (busy, idle time.Duration, switches int64) {
	for line := range strings.Lines(raw) {
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 8 && fields[0] == "cpu":
			// user nice system idle iowait irq softirq [steal ...]
			var ticks [8]int64
			for i := 1; i < len(fields) && i <= 8; i++ {
				ticks[i-1], _ = strconv.ParseInt(fields[i], 10, 64)
			}
			tick := time.Second / clockTicks
			idle = time.Duration(ticks[3]+ticks[4]) * tick
			busy = time.Duration(ticks[0]+ticks[1]+ticks[2]+ticks[5]+ticks[6]+ticks[7]) * tick
		case len(fields) == 2 && fields[0] == "ctxt":
			switches, _ = strconv.ParseInt(fields[1], 10, 64)
		}
	}
	return busy, idle, switches
}

// parsePidStat reads a process's name and CPU time (user and system) from its
// /proc/PID/stat. The name (field 2) is in parentheses and may hold spaces.
func parsePidStat(raw []byte) (name string, cpu time.Duration, ok bool) {
	open, end := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if open < 0 || end < open || end+2 > len(raw) {
		return "", 0, false
	}
	// After the name come field 3 (state) onwards, so utime is index 11.
	fields := strings.Fields(string(raw[end+2:]))
	if len(fields) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return string(raw[open+1 : end]), time.Duration(utime+stime) * (time.Second / clockTicks), true
}
