// Package jobstest holds what tests of the scheduler and of the servers that run it
// need: a clock that moves only when told to (ManualClock, a jobs.Clock).
package jobstest
