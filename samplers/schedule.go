package samplers

import "fmt"

// Schedule gives the step size η of each step of a run, numbered from 1
// as State.Steps counts them: step n takes the state after n−1 steps to
// the state after n. A schedule depends on the step alone, so a run
// restored from a Snapshot continues with the step sizes it would have had.
type Schedule func(step int) float64

// Constant returns the schedule of a fixed step size eta.
func Constant(eta float64) Schedule { return func(int) float64 { return eta } }

// Warmup returns the schedule that takes the step size warm for the first
// steps steps and eta afterwards, as the authors' data experiments start
// with a smaller step for the first data epoch.
func Warmup(steps int, warm, eta float64) Schedule {
	return func(step int) float64 {
		if step <= steps {
			return warm
		}
		return eta
	}
}

// stepSize returns η of the step that takes s forward, checking that it is
// a positive number.
func stepSize(name string, sched Schedule, s *State) (float64, error) {
	eta := sched(s.Steps + 1)
	if !(eta > 0) || !finite(eta) {
		return 0, fmt.Errorf("samplers: %s step size %v at step %d, want a positive number", name, eta, s.Steps+1)
	}
	return eta, nil
}

// checkSchedule refuses a nil schedule and one whose first step size is
// not a positive number.
func checkSchedule(name string, sched Schedule) error {
	if sched == nil {
		return fmt.Errorf("samplers: %s has no step size (set StepSize, e.g. samplers.Constant(0.01))", name)
	}
	_, err := stepSize(name, sched, &State{})
	return err
}
