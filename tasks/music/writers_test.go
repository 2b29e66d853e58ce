package music

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// Writers of small MAT-files and pickles for the tests and the fuzz seeds.

// matWriter writes MATLAB v5 data elements in one byte order.
type matWriter struct {
	order binary.ByteOrder
}

var (
	le = matWriter{binary.LittleEndian}
	be = matWriter{binary.BigEndian}
)

// header returns the 128-byte file header.
func (w matWriter) header() []byte {
	h := bytes.Repeat([]byte{' '}, matHeaderLen)
	copy(h, "MATLAB 5.0 MAT-file, Platform: GLNXA64, Created by: music_test")
	for i := 116; i < 124; i++ {
		h[i] = 0
	}
	w.order.PutUint16(h[124:], 0x0100)
	w.order.PutUint16(h[126:], 'M'<<8|'I') // reads "IM" little-endian, "MI" big-endian
	return h
}

// file returns a MAT-file holding the given top-level elements.
func (w matWriter) file(elems ...[]byte) []byte {
	return bytes.Join(append([][]byte{w.header()}, elems...), nil)
}

// elem returns a data element: tag, data and padding to 8 bytes.
func (w matWriter) elem(typ uint32, data []byte) []byte {
	b := make([]byte, 8, 8+len(data)+7)
	w.order.PutUint32(b, typ)
	w.order.PutUint32(b[4:], uint32(len(data)))
	b = append(b, data...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// small returns a data element in the small format (at most 4 bytes of data).
func (w matWriter) small(typ uint32, data []byte) []byte {
	b := make([]byte, 8)
	w.order.PutUint32(b, uint32(len(data))<<16|typ)
	copy(b[4:], data)
	return b
}

// matrix returns a miMATRIX element of the given class, dimensions and name,
// followed by body (the cells or the values).
func (w matWriter) matrix(flags uint32, dims []int, name string, body ...[]byte) []byte {
	f := make([]byte, 8)
	w.order.PutUint32(f, flags)
	d := make([]byte, 4*len(dims))
	for i, x := range dims {
		w.order.PutUint32(d[4*i:], uint32(int32(x)))
	}
	var nm []byte
	if len(name) <= 4 && name != "" {
		nm = w.small(miINT8, []byte(name))
	} else {
		nm = w.elem(miINT8, []byte(name))
	}
	parts := append([][]byte{w.elem(miUINT32, f), w.elem(miINT32, d), nm}, body...)
	return w.elem(miMATRIX, bytes.Join(parts, nil))
}

// cell returns a 1×N cell array of the given miMATRIX elements.
func (w matWriter) cell(name string, elems ...[]byte) []byte {
	return w.matrix(mxCELL, []int{1, len(elems)}, name, elems...)
}

// roll returns an unnamed T×88 double matrix of the frames (row-major 0/1
// values), its values stored as miUINT8 the way MATLAB stores them.
func (w matWriter) roll(s Sequence) []byte {
	return w.matrix(mxDOUBLE, []int{s.T, Keys}, "", w.elem(miUINT8, colMajor(s)))
}

// colMajor returns the roll of s column by column.
func colMajor(s Sequence) []byte {
	b := make([]byte, s.T*Keys)
	for t := range s.T {
		for j := range Keys {
			b[j*s.T+t] = s.Roll[t*Keys+j]
		}
	}
	return b
}

// float64s returns the values as a miDOUBLE element.
func (w matWriter) float64s(vals []float64) []byte {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		w.order.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return w.elem(9, b)
}

// compress returns a miCOMPRESSED element holding elem (not padded, as
// MATLAB writes them).
func (w matWriter) compress(elem []byte) []byte {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(elem)
	zw.Close()
	b := make([]byte, 8, 8+z.Len())
	w.order.PutUint32(b, miCOMPRESSED)
	w.order.PutUint32(b[4:], uint32(z.Len()))
	return append(b, z.Bytes()...)
}

// dataset returns a MAT-file of d in the layout of the music files: three
// compressed cell arrays of double matrices.
func (w matWriter) dataset(d *Dataset, compressed bool) []byte {
	var vars [][]byte
	for _, s := range []struct {
		name  string
		split Split
	}{{"traindata", d.Train}, {"validdata", d.Valid}, {"testdata", d.Test}} {
		cells := make([][]byte, len(s.split))
		for i, q := range s.split {
			cells[i] = w.roll(q)
		}
		v := w.cell(s.name, cells...)
		if compressed {
			v = w.compress(v)
		}
		vars = append(vars, v)
	}
	return w.file(vars...)
}

// randomDataset returns a small data set of random sparse rolls, with
// sequences of the given lengths per split.
func randomDataset(seed uint64, train, valid, test []int) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	mk := func(lens []int) Split {
		s := make(Split, len(lens))
		for i, t := range lens {
			roll := make([]uint8, t*Keys)
			for k := range roll {
				if rng.IntN(10) == 0 {
					roll[k] = 1
				}
			}
			s[i] = Sequence{T: t, Roll: roll}
		}
		return s
	}
	return &Dataset{Train: mk(train), Valid: mk(valid), Test: mk(test)}
}

// pickleWriter writes protocol-2 pickles in the form of the original music
// pickles.
type pickleWriter struct {
	bytes.Buffer
	// numpy writes notes as numpy int64 scalars (as the original JSB pickle
	// does) instead of Python ints; order is the dtype's byte order.
	numpy bool
	order byte
	// codecs writes the scalars' bytes as _codecs.encode(str, 'latin1'), as
	// Python 3 does in protocol 2.
	codecs bool
}

func (p *pickleWriter) str(s string) {
	p.WriteByte('U')
	p.WriteByte(byte(len(s)))
	p.WriteString(s)
}

func (p *pickleWriter) note(n int) {
	if !p.numpy {
		p.WriteByte('K')
		p.WriteByte(byte(n))
		return
	}
	order := p.order
	if order == 0 {
		order = '<'
	}
	p.WriteString("cnumpy.core.multiarray\nscalar\n")
	p.WriteString("cnumpy\ndtype\n")
	p.str("i8")
	p.WriteString("K\x00K\x01\x87R")
	p.WriteString("(K\x03")
	p.str(string(order))
	p.WriteString("NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb")
	v := make([]byte, 8)
	if order == '>' {
		binary.BigEndian.PutUint64(v, uint64(n))
	} else {
		binary.LittleEndian.PutUint64(v, uint64(n))
	}
	if p.codecs {
		p.WriteString("c_codecs\nencode\n")
		var u []rune
		for _, c := range v {
			u = append(u, rune(c))
		}
		p.WriteByte('X')
		s := string(u)
		binary.Write(p, binary.LittleEndian, uint32(len(s)))
		p.WriteString(s)
		p.str("latin1")
		p.WriteString("\x86R")
	} else {
		p.str(string(v))
	}
	p.WriteString("\x86R")
}

func (p *pickleWriter) split(s Split) {
	p.WriteString("](")
	for _, q := range s {
		p.WriteString("](")
		for t := range q.T {
			p.WriteByte('(')
			for _, n := range q.Notes(t) {
				p.note(n)
			}
			p.WriteByte('t')
		}
		p.WriteByte('e')
	}
	p.WriteByte('e')
}

// dataset returns the pickle of d: {'train': ..., 'valid': ..., 'test': ...}.
func (p *pickleWriter) dataset(d *Dataset) []byte {
	p.Reset()
	p.WriteString("\x80\x02}(")
	p.str("test")
	p.split(d.Test)
	p.str("train")
	p.split(d.Train)
	p.str("valid")
	p.split(d.Valid)
	p.WriteString("u.")
	return bytes.Clone(p.Bytes())
}

// sameDataset reports the first difference between two data sets' splits.
func sameDataset(a, b *Dataset) error {
	for _, s := range []struct {
		name string
		x, y Split
	}{{"train", a.Train, b.Train}, {"valid", a.Valid, b.Valid}, {"test", a.Test, b.Test}} {
		if len(s.x) != len(s.y) {
			return fmt.Errorf("%s: %d sequences vs %d", s.name, len(s.x), len(s.y))
		}
		for i := range s.x {
			p, q := s.x[i], s.y[i]
			if p.T != q.T {
				return fmt.Errorf("%s[%d]: %d frames vs %d", s.name, i, p.T, q.T)
			}
			if len(p.Roll) != p.T*Keys || len(q.Roll) != q.T*Keys {
				return fmt.Errorf("%s[%d]: rolls of %d and %d values for %d frames", s.name, i, len(p.Roll), len(q.Roll), p.T)
			}
			for t := range p.T {
				if !bytes.Equal(p.Frame(t), q.Frame(t)) {
					return fmt.Errorf("%s[%d] frame %d: notes %v vs %v", s.name, i, t, p.Notes(t), q.Notes(t))
				}
			}
		}
	}
	return nil
}
