package music_test

import (
	"fmt"
	"log"

	"github.com/metasgmcmc/metasgmcmc/tasks/datadir"
	"github.com/metasgmcmc/metasgmcmc/tasks/music"
)

// Load a data set from the data directory ($METASGMCMC_DATA, else ./data) and
// feed its sequences to a model as float64 frames.
func ExampleLoad() {
	d, err := music.Load(datadir.Dir(""), "piano")
	if err != nil {
		log.Fatal(err) // a *datadir.MissingError says where to get the file
	}
	// The energy of a minibatch of M frames is scaled by N/M.
	n := d.Train.Frames()
	fmt.Printf("%s: %d training sequences, N = %d frames\n", d.Name, len(d.Train), n)
	var x []float64
	for _, s := range d.Train {
		x = s.Float64s(x) // s.T×88 values, row-major, reusing x
		// ... feed frames x[t*music.Keys:(t+1)*music.Keys], t < s.T
	}
}

func ExampleSequence_Notes() {
	// A two-frame roll: middle C (MIDI 60) then a C major triad.
	roll := make([]uint8, 2*music.Keys)
	roll[60-music.LowestNote] = 1
	for _, n := range []int{60, 64, 67} {
		roll[music.Keys+n-music.LowestNote] = 1
	}
	s := music.Sequence{T: 2, Roll: roll}
	split := music.Split{s}
	fmt.Println(s.Notes(0), s.Notes(1), split.Frames(), len(s.Float64s(nil)))
	// Output: [60] [60 64 67] 2 176
}
