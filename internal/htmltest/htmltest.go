// Package htmltest reads the HTML tables the project renders, for tests
// that compare the cells with the values behind them.
package htmltest

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// Table is one <table> of rendered HTML: its caption, head and rows of
// cell texts (entities decoded).
type Table struct {
	Caption string
	Head    []string
	Rows    [][]string
}

// Parse reads the tables of an HTML fragment, which must also be
// well-formed XML: every element closed, every text escaped. Elements other
// than the expected ones fail the test, so markup smuggled in through a
// cell is caught.
func Parse(t testing.TB, fragment string) []Table {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader("<root>" + fragment + "</root>"))
	d.Strict = true
	var tables []Table
	var cur *Table
	var row []string
	var text strings.Builder
	inCell := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, fragment)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "root", "thead", "tbody", "p", "pre", "strong":
			case "table":
				tables = append(tables, Table{})
				cur = &tables[len(tables)-1]
			case "tr":
				row = nil
			case "th", "td", "caption":
				inCell = true
				text.Reset()
			default:
				t.Fatalf("unexpected element <%s> in\n%s", e.Name.Local, fragment)
			}
		case xml.CharData:
			if inCell {
				text.Write(e)
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "th", "td":
				inCell = false
				row = append(row, text.String())
			case "caption":
				inCell = false
				cur.Caption = text.String()
			case "tr":
				if cur.Head == nil {
					cur.Head = row
				} else {
					cur.Rows = append(cur.Rows, row)
				}
			}
		}
	}
	return tables
}

// Column returns the index of a head cell.
func Column(t testing.TB, tb Table, name string) int {
	t.Helper()
	for i, h := range tb.Head {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %q in %v", name, tb.Head)
	return -1
}
