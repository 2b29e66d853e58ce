package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/metasgmcmc/metasgmcmc/cmd/internal/sweep"
	"github.com/metasgmcmc/metasgmcmc/tasks/datadir/datatest"
)

// SlurmEnv is the environment variable that turns on
// TestSlurmArrayMatchesLocal: with METASGMCMC_SLURM=1 it submits to the
// Slurm cluster that Slurm's commands reach (SLURM_CONF), whose node must
// be this machine, as .ci/slurm-up.sh starts it; .ci/run does that.
const SlurmEnv = "METASGMCMC_SLURM"

// TestSlurmArrayMatchesLocal submits a sweep of four short GRU runs as a
// Slurm job array (sweep slurm --submit), requeues one of its tasks while
// it runs, past its first checkpoint (scontrol requeue: SIGTERM, then the
// task again from the start of its script), waits for the array, and
// checks that the requeued task resumed from the run's checkpoint and that
// the table figures sweep gathers from the array's runs is byte for byte
// the one from the same sweep run locally (sweep run --jobs 2), and so are
// the runs' metrics but their seconds.
func TestSlurmArrayMatchesLocal(t *testing.T) {
	if os.Getenv(SlurmEnv) != "1" {
		t.Skipf("set %s=1 to submit to the Slurm cluster SLURM_CONF names, on this machine (.ci/slurm-up.sh starts one)", SlurmEnv)
	}
	for _, c := range []string{"sbatch", "squeue", "scontrol"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s=1 but %s is not on $PATH: install Slurm's commands (.ci/slurm-up.sh does)", SlurmEnv, c)
		}
	}
	start := time.Now()
	data := datatest.Need(t, "music/Piano_midi.mat")
	bin := binaries(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	file := writeSweep(t, dir, "gru.sweep", gruSweep(data))
	s, err := sweep.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	sw, figures := filepath.Join(bin, "sweep"), filepath.Join(bin, "figures")
	built := time.Now()

	// the array first, while the machine is idle
	id := strings.TrimSpace(command(t, dir, sw, "slurm", "--submit", "--runs", "slurm", file))
	t.Cleanup(func() { exec.Command("scancel", id).Run() })
	tasks := func() map[string]string { // task ID (1_0) → state; an array's pending rest as 1_[2-3]
		out, err := exec.Command("squeue", "-h", "-j", id, "-o", "%i %T").CombinedOutput()
		if err != nil {
			t.Fatalf("squeue -j %s: %v\n%s", id, err, out)
		}
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(l); len(f) == 2 {
				m[f[0]] = f[1]
			}
		}
		return m
	}
	requeued := -1
	waitFor(t, 3*time.Minute, "running task past its first checkpoint", func() bool {
		ts := tasks()
		for i := range s.Len() {
			_, err := os.Stat(filepath.Join(dir, "slurm", s.Run(i, "").Dir, sweep.CheckpointFile))
			if ts[id+"_"+strconv.Itoa(i)] == "RUNNING" && err == nil {
				requeued = i
				return true
			}
		}
		return false
	})
	task := id + "_" + strconv.Itoa(requeued)
	if out, err := exec.Command("scontrol", "requeue", task).CombinedOutput(); err != nil {
		t.Fatalf("scontrol requeue %s: %v\n%s", task, err, out)
	}
	requeuedAt := time.Now()
	// a requeued job waits two minutes before it is eligible again: start it now
	waitFor(t, 3*time.Minute, "array's end", func() bool {
		ts := tasks()
		if ts[task] == "PENDING" {
			exec.Command("scontrol", "update", "JobId="+task, "StartTime=now").Run()
		}
		return len(ts) == 0
	})
	arrayDone := time.Now()
	if out, _ := exec.Command("scontrol", "show", "job", task).CombinedOutput(); !strings.Contains(string(out), "Restarts=1") {
		t.Errorf("scontrol show job %s does not say Restarts=1:\n%s", task, out)
	}
	logFile := filepath.Join(dir, "slurm", "slurm", s.Name+"-"+task+".log")
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "interrupted by SIGTERM") || !strings.Contains(string(log), ": resuming from its checkpoint at step ") {
		t.Errorf("the requeued task's log %s does not show a SIGTERM and a resumption:\n%s", logFile, log)
	}

	// the same sweep locally (shared with TestRunResumesInterruptedRuns)
	ref := localGRU(t, data, "")
	localDone := time.Now()

	sameRuns(t, s, ref, filepath.Join(dir, "slurm"))
	local := command(t, filepath.Dir(ref), figures, "sweep", "--stdout", "--runs", "local", "gru.sweep")
	array := command(t, dir, figures, "sweep", "--stdout", "--runs", "slurm", file)
	if local != array || !strings.Contains(local, "| SGHMC | ") || strings.Contains(local, "Not in the table") {
		t.Errorf("the tables differ, or lack runs:\nlocal:\n%s\nSlurm:\n%s", local, array)
	}
	t.Logf("%d runs, task %s requeued at %.1f s; build %.1f s, array %.1f s, local sweep (if not run before) %.1f s, in all %.1f s",
		s.Len(), task, requeuedAt.Sub(built).Seconds(), built.Sub(start).Seconds(), arrayDone.Sub(built).Seconds(),
		localDone.Sub(arrayDone).Seconds(), time.Since(start).Seconds())
	t.Logf("the gathered table:\n%s", local)
}
