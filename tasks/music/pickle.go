package music

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"
)

// FromPickle decodes a data set from the bytes of a pickle (see LoadPickle).
// The data set has no name.
//
// Globals the pickle may name are limited to what such pickles use: numpy
// scalars (numpy.core.multiarray.scalar or numpy._core.multiarray.scalar of
// an integer numpy.dtype) and _codecs.encode (bytes in protocol-2 pickles
// written by Python 3); any other is an error.
func FromPickle(b []byte) (*Dataset, error) {
	if err := scanPickle(b); err != nil {
		return nil, err
	}
	u := pickle.NewUnpickler(bytes.NewReader(b))
	u.FindClass = findClass
	v, err := unpickle(&u)
	if err != nil {
		return nil, fmt.Errorf("bad pickle: %w", err)
	}
	top, ok := v.(*types.Dict)
	if !ok {
		return nil, fmt.Errorf("pickle holds %s, want a dict with keys 'train', 'valid' and 'test'", pyType(v))
	}
	c := converter{budget: len(b)}
	d := &Dataset{}
	for _, s := range []struct {
		key string
		dst *Split
	}{{"train", &d.Train}, {"valid", &d.Valid}, {"test", &d.Test}} {
		var val any
		found := false
		for _, e := range *top {
			if k, ok := e.Key.(string); ok && k == s.key {
				if found {
					return nil, fmt.Errorf("pickled dict has key '%s' twice", s.key)
				}
				val, found = e.Value, true
			}
		}
		if !found {
			return nil, fmt.Errorf("pickled dict has no key '%s'", s.key)
		}
		split, err := c.split(s.key, val)
		if err != nil {
			return nil, err
		}
		*s.dst = split
	}
	return d, nil
}

// unpickle runs u, turning a panic of gopickle on malformed input into an
// error.
func unpickle(u *pickle.Unpickler) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, fmt.Errorf("malformed pickle (%v)", p)
		}
	}()
	return u.Load()
}

// converter turns unpickled values into sequences. budget is the number of
// frames it may still make: a pickle can reference one object many times
// (through its memo), so the frames are bounded by its size in bytes, which
// bounds the frames of any pickle without shared references.
type converter struct {
	budget int
}

func (c *converter) split(key string, v any) (Split, error) {
	seqs, ok := pyList(v)
	if !ok {
		return nil, fmt.Errorf("'%s' is %s, want a list of sequences", key, pyType(v))
	}
	split := make(Split, len(seqs))
	for i, sv := range seqs {
		frames, ok := pyList(sv)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is %s, want a list of frames", key, i, pyType(sv))
		}
		if c.budget -= len(frames); c.budget < 0 {
			return nil, fmt.Errorf("%s[%d]: the pickle references more frames than it has bytes", key, i)
		}
		roll := make([]uint8, len(frames)*Keys)
		for t, fv := range frames {
			notes, ok := pyList(fv)
			if !ok {
				return nil, fmt.Errorf("%s[%d][%d] is %s, want a tuple of MIDI note numbers", key, i, t, pyType(fv))
			}
			for _, nv := range notes {
				n, ok := pyInt(nv)
				if !ok {
					return nil, fmt.Errorf("%s[%d][%d] holds %s, want MIDI note numbers (integers)", key, i, t, pyType(nv))
				}
				if n < LowestNote || n > HighestNote {
					return nil, fmt.Errorf("%s[%d][%d] holds note %d, outside the piano's MIDI notes %d to %d",
						key, i, t, n, LowestNote, HighestNote)
				}
				roll[t*Keys+int(n-LowestNote)] = 1
			}
		}
		split[i] = Sequence{T: len(frames), Roll: roll}
	}
	return split, nil
}

// pyList returns the items of a Python list or tuple.
func pyList(v any) ([]any, bool) {
	switch x := v.(type) {
	case *types.List:
		return *x, true
	case *types.Tuple:
		return *x, true
	}
	return nil, false
}

// pyInt returns the value of a Python or numpy integer that fits an int64.
func pyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
	}
	return 0, false
}

// pyType names the Python type of an unpickled value, for errors.
func pyType(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case *types.Dict:
		return "a dict"
	case *types.List:
		return "a list"
	case *types.Tuple:
		return "a tuple"
	case string:
		return fmt.Sprintf("the string %q", clip(x, 20))
	case []byte:
		return "bytes"
	case int, int64, *big.Int:
		return fmt.Sprintf("the integer %v", x)
	case float64:
		return fmt.Sprintf("the float %v", x)
	case bool:
		return fmt.Sprintf("the bool %v", x)
	case *npDtype:
		return "a numpy dtype"
	}
	return fmt.Sprintf("a %T", v)
}

// findClass resolves the globals a pickle names (GLOBAL, STACK_GLOBAL, INST).
func findClass(module, name string) (any, error) {
	switch module + "." + name {
	case "numpy.dtype":
		return npDtypeClass{}, nil
	case "numpy.core.multiarray.scalar", "numpy._core.multiarray.scalar":
		return npScalarFunc{}, nil
	case "_codecs.encode":
		return codecsEncode{}, nil
	}
	return nil, fmt.Errorf("pickle references %s.%s, which a music data set does not use", module, name)
}

// npDtype is a numpy dtype, enough of it to decode integer scalars.
type npDtype struct {
	kind  byte // 'i' (signed), 'u' (unsigned) or 'b' (bool); others are kept to be rejected
	size  int
	order binary.ByteOrder
	str   string
}

// npDtypeClass is numpy.dtype: dtype(obj, align, copy) for obj a type string
// such as "i8", "<u2" or "b1".
type npDtypeClass struct{}

// Call makes a dtype from its type string.
func (npDtypeClass) Call(args ...any) (any, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("numpy.dtype called without arguments")
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("numpy.dtype(%s) is not supported", pyType(args[0]))
	}
	d := &npDtype{order: binary.LittleEndian, str: s}
	t := s
	if len(t) > 0 && (t[0] == '<' || t[0] == '>' || t[0] == '|' || t[0] == '=') {
		d.setOrder(t[0])
		t = t[1:]
	}
	if len(t) == 2 && t[1] >= '1' && t[1] <= '8' {
		d.kind, d.size = t[0], int(t[1]-'0')
	}
	return d, nil
}

func (d *npDtype) setOrder(c byte) {
	if c == '>' {
		d.order = binary.BigEndian
	} else {
		d.order = binary.LittleEndian // '<'; '|' (not applicable) and '=' (native; pickles come from little-endian machines)
	}
}

// PySetState reads the byte order from the dtype's pickled state
// (version, byteorder, subarray, names, fields, elsize, alignment, flags).
func (d *npDtype) PySetState(state any) error {
	items, ok := pyList(state)
	if !ok || len(items) < 2 {
		return fmt.Errorf("numpy dtype state is %s, want a tuple", pyType(state))
	}
	if o, ok := items[1].(string); ok && len(o) == 1 {
		d.setOrder(o[0])
	}
	return nil
}

// npScalarFunc is numpy.core.multiarray.scalar(dtype, data): a numpy scalar
// from the bytes of its value. Only integer and bool scalars are decoded.
type npScalarFunc struct{}

// Call decodes a scalar from its dtype and bytes.
func (npScalarFunc) Call(args ...any) (any, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("numpy scalar with %d arguments, want 2", len(args))
	}
	d, ok := args[0].(*npDtype)
	if !ok {
		return nil, fmt.Errorf("numpy scalar of %s, want a dtype", pyType(args[0]))
	}
	var data []byte
	switch x := args[1].(type) {
	case string:
		data = []byte(x)
	case []byte:
		data = x
	default:
		return nil, fmt.Errorf("numpy scalar data is %s, want bytes", pyType(args[1]))
	}
	if d.kind != 'i' && d.kind != 'u' && d.kind != 'b' || (d.size != 1 && d.size != 2 && d.size != 4 && d.size != 8) {
		return nil, fmt.Errorf("numpy scalar of dtype %q, want an integer", d.str)
	}
	if len(data) != d.size {
		return nil, fmt.Errorf("numpy scalar of dtype %q holds %d bytes, want %d", d.str, len(data), d.size)
	}
	var u uint64
	switch d.size {
	case 1:
		u = uint64(data[0])
	case 2:
		u = uint64(d.order.Uint16(data))
	case 4:
		u = uint64(d.order.Uint32(data))
	case 8:
		u = d.order.Uint64(data)
	}
	if d.kind == 'i' { // sign-extend
		shift := 64 - 8*uint(d.size)
		return int64(u<<shift) >> shift, nil
	}
	if u > 1<<62 {
		return new(big.Int).SetUint64(u), nil
	}
	return int64(u), nil
}

// codecsEncode is _codecs.encode(text, "latin1"), which protocol-2 pickles
// written by Python 3 use for bytes.
type codecsEncode struct{}

// Call encodes a latin1 string as bytes.
func (codecsEncode) Call(args ...any) (any, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("_codecs.encode with %d arguments, want 2", len(args))
	}
	s, ok1 := args[0].(string)
	enc, ok2 := args[1].(string)
	if !ok1 || !ok2 || (enc != "latin1" && enc != "latin-1" && enc != "latin_1") {
		return nil, fmt.Errorf("_codecs.encode(%s, %s) is not supported (want a latin1 string)", pyType(args[0]), pyType(args[1]))
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("_codecs.encode: character %U is not latin1", r)
		}
		b = append(b, byte(r))
	}
	return b, nil
}

// Pickle opcode arguments, for scanPickle.
const (
	argNone   = iota
	argFixed1 // 1 byte
	argFixed2
	argFixed4
	argFixed8
	argLine  // a line ending in '\n'
	argLines // two lines
	argLen1  // uint8 length, then that many bytes
	argLen4  // uint32 length, then that many bytes
	argLen8  // uint64 length, then that many bytes
	argFrame // uint64 length of the frame that follows
)

// argWidth is the width of a fixed argument or of a length.
var argWidth = [...]uint64{argFixed1: 1, argFixed2: 2, argFixed4: 4, argFixed8: 8, argLen1: 1, argLen4: 4, argLen8: 8, argFrame: 8}

// pickleArgs gives the argument of every pickle opcode (protocols 0 to 5);
// opcodes missing here are invalid.
var pickleArgs = func() map[byte]int {
	m := map[byte]int{}
	for _, c := range []byte("(.012NQRabd}eloqs)tu\x81\x85\x86\x87\x88\x89\x8f\x90\x91\x92\x93\x94\x97\x98]") {
		m[c] = argNone
	}
	for _, c := range []byte("FILPSVgp") {
		m[c] = argLine
	}
	m['c'], m['i'] = argLines, argLines
	m['K'], m['h'], m['q'], m['\x80'], m['\x82'] = argFixed1, argFixed1, argFixed1, argFixed1, argFixed1
	m['M'], m['\x83'] = argFixed2, argFixed2
	m['J'], m['j'], m['r'], m['\x84'] = argFixed4, argFixed4, argFixed4, argFixed4
	m['G'] = argFixed8
	m['U'], m['C'], m['\x8c'], m['\x8a'] = argLen1, argLen1, argLen1, argLen1
	m['T'], m['X'], m['B'], m['\x8b'] = argLen4, argLen4, argLen4, argLen4
	m['\x8d'], m['\x8e'], m['\x96'] = argLen8, argLen8, argLen8
	m['\x95'] = argFrame
	return m
}()

// scanPickle walks the opcodes of a pickle up to its STOP and checks every
// length against the bytes that remain, so that gopickle (which allocates
// what a length says before reading) never makes a buffer larger than the
// pickle.
func scanPickle(b []byte) error {
	for off := 0; off < len(b); {
		op := b[off]
		arg, ok := pickleArgs[op]
		if !ok {
			return fmt.Errorf("bad pickle: unknown opcode 0x%02x at byte %d", op, off)
		}
		if op == '.' {
			return nil
		}
		p := off + 1
		left := uint64(len(b) - p)
		var n uint64
		switch arg {
		case argFixed1, argFixed2, argFixed4, argFixed8:
			n = argWidth[arg]
		case argLine, argLines:
			lines := 1
			if arg == argLines {
				lines = 2
			}
			q := p
			for range lines {
				i := bytes.IndexByte(b[q:], '\n')
				if i < 0 {
					return fmt.Errorf("bad pickle: opcode %q at byte %d: unterminated line", op, off)
				}
				q += i + 1
			}
			n = uint64(q - p)
		case argLen1, argLen4, argLen8, argFrame:
			w := argWidth[arg]
			if left < w {
				return fmt.Errorf("bad pickle: truncated opcode 0x%02x at byte %d", op, off)
			}
			var l uint64
			switch w {
			case 1:
				l = uint64(b[p])
			case 4:
				l = uint64(binary.LittleEndian.Uint32(b[p:]))
				if op == 'T' || op == '\x8b' { // signed
					l = uint64(int64(int32(l)))
				}
			case 8:
				l = binary.LittleEndian.Uint64(b[p:])
			}
			if l > left-w {
				return fmt.Errorf("bad pickle: opcode 0x%02x at byte %d declares %d bytes but only %d remain", op, off, l, left-w)
			}
			n = w
			if arg != argFrame { // a frame's contents are opcodes: scan them
				n += l
			}
		}
		if n > left {
			return fmt.Errorf("bad pickle: truncated opcode 0x%02x at byte %d", op, off)
		}
		off = p + int(n)
	}
	return fmt.Errorf("bad pickle: no STOP opcode (truncated?)")
}
