package plot

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot/font"
)

// fontName names the typeface of all text, sans, in messages.
const fontName = "Liberation Sans"

// GlyphError is the error for text with a character that the figures'
// font cannot draw and that has no fallback (see CheckText).
type GlyphError struct {
	Text string // the text
	Rune rune   // its first character that cannot be drawn
}

// Error names the character and the text.
func (e *GlyphError) Error() string {
	return fmt.Sprintf("%q has the character %q (U+%04X), which the figures' font, %s, cannot draw: write it another way",
		e.Text, e.Rune, e.Rune, fontName)
}

// CheckText returns a *GlyphError if s has a character that the figures
// draw as nothing: one that the font lacks and that has no fallback.
// Line breaks are allowed; they start a new line of text.
//
// The fallback of a run of superscript or subscript characters (such as
// "⁹" or "ₙ") of which the font lacks one is the run in plain characters
// after "^" or "_": "10⁻⁹" is drawn as "10^-9", "xₙ" as "x_n". Runs whose
// characters the font has, such as "θ₀", are drawn as they are.
func CheckText(s string) error {
	_, err := drawable(s)
	return err
}

// drawable returns s as the figures draw it, its sub- and superscripts
// replaced where the font lacks one (see CheckText), or a *GlyphError.
func drawable(s string) (string, error) {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		if mark, _, ok := scriptRune(r); ok {
			// the maximal run of scripts of the same kind
			j := i
			whole := true
			for ; j < len(rs); j++ {
				m, _, ok := scriptRune(rs[j])
				if !ok || m != mark {
					break
				}
				whole = whole && hasGlyph(rs[j])
			}
			if whole {
				b.WriteString(string(rs[i:j]))
			} else {
				b.WriteString(mark)
				for _, c := range rs[i:j] {
					_, plain, _ := scriptRune(c)
					b.WriteRune(plain)
				}
			}
			i = j
			continue
		}
		if r != '\n' && !hasGlyph(r) {
			return "", &GlyphError{Text: s, Rune: r}
		}
		b.WriteRune(r)
		i++
	}
	return b.String(), nil
}

// figText is a text of a figure to pass through drawable: what it is, for
// messages (as "title"), and where it is.
type figText struct {
	what string
	s    *string
}

// drawableAll applies drawable to each of texts in place, in order, and
// returns the first error, prefixed with what the text is.
func drawableAll(texts ...figText) error {
	for _, t := range texts {
		d, err := drawable(*t.s)
		if err != nil {
			return fmt.Errorf("%s: %w", t.what, err)
		}
		*t.s = d
	}
	return nil
}

// sansFace is the font of all text, as the text handler looks it up, for
// looking up glyphs.
var sansFace = font.DefaultCache.Lookup(sans, 10)

// hasGlyph reports whether the font has a glyph for r.
func hasGlyph(r rune) bool {
	i, err := sansFace.Face.GlyphIndex(nil, r)
	return err == nil && i != 0
}

// scripts maps the superscript and subscript characters with a plain
// equivalent to that, in two strings of matching runes each.
var scripts = [2]struct{ mark, script, plain string }{
	{"^", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿ", "0123456789+-=()in"},
	{"_", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜᵢᵣᵤᵥⱼ", "0123456789+-=()aeoxhklmnpstiruvj"},
}

// scriptRune reports whether r is a superscript or subscript character
// with a plain equivalent, and returns the mark ("^" or "_") and the
// equivalent.
func scriptRune(r rune) (mark string, plain rune, ok bool) {
	for _, s := range scripts {
		if i := strings.IndexRune(s.script, r); i >= 0 {
			n := len([]rune(s.script[:i]))
			return s.mark, []rune(s.plain)[n], true
		}
	}
	return "", 0, false
}
