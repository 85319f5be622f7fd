// Package logo draws the kernel's logo: a capsule on a rounded square in
// Go's blue. The kernelspec embeds the PNGs it draws (`go generate`), so
// the installed binary carries no drawing code.
package logo

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
)

// Colors: Go's gopher blue, and a darker half for the capsule.
var (
	background = color.NRGBA{R: 0x00, G: 0xAD, B: 0xD8, A: 0xFF}
	white      = color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xFF}
	dark       = color.NRGBA{R: 0x1E, G: 0x3A, B: 0x5F, A: 0xFF}
)

// supersample is how many samples per pixel side the edges are smoothed
// with.
const supersample = 8

// Draw returns the logo at size×size pixels.
func Draw(size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	s := float64(size)
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var r, g, b, a float64
			for sy := 0; sy < supersample; sy++ {
				for sx := 0; sx < supersample; sx++ {
					// Coordinates in [0,1]² of this sample.
					u := (float64(x) + (float64(sx)+0.5)/supersample) / s
					v := (float64(y) + (float64(sy)+0.5)/supersample) / s
					c, ok := shade(u, v)
					if !ok {
						continue
					}
					r += float64(c.R)
					g += float64(c.G)
					b += float64(c.B)
					a++
				}
			}
			if a == 0 {
				continue
			}
			n := float64(supersample * supersample)
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(math.Round(r / a)), G: uint8(math.Round(g / a)), B: uint8(math.Round(b / a)),
				A: uint8(math.Round(255 * a / n)),
			})
		}
	}
	return img
}

// shade is the color at (u, v) of the unit square, and whether the logo
// covers that point.
func shade(u, v float64) (color.NRGBA, bool) {
	if !inRoundedSquare(u, v, 0.2) {
		return color.NRGBA{}, false
	}
	// The capsule: a stadium along the diagonal from lower left to upper
	// right, length 0.72, radius 0.17, centered.
	const half, radius = 0.36 - 0.17, 0.17
	du, dv := u-0.5, v-0.5
	along := (du - dv) / math.Sqrt2  // toward the upper right
	across := (du + dv) / math.Sqrt2 // perpendicular
	t := math.Max(-half, math.Min(half, along))
	if math.Hypot(along-t, across) > radius {
		return background, true
	}
	if math.Hypot(along-t, across) > radius-0.035 {
		return white, true // outline
	}
	if along < 0 {
		return white, true
	}
	return dark, true
}

// inRoundedSquare reports whether (u, v) lies in the unit square with
// corners rounded to radius r.
func inRoundedSquare(u, v, r float64) bool {
	cu := math.Max(r, math.Min(1-r, u))
	cv := math.Max(r, math.Min(1-r, v))
	return math.Hypot(u-cu, v-cv) <= r
}

// PNG returns the logo at size×size as PNG.
func PNG(size int) ([]byte, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, Draw(size)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
