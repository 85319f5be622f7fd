package kernel

import (
	"go/scanner"
	"go/token"
)

// itemKind is what a top-level item of a cell is: yaegi evaluates
// declarations as a file and statements as a function body, and rejects a
// source that mixes them, so a cell is cut into items of one kind each.
type itemKind int

const (
	itemStmt itemKind = iota
	itemDecl
	itemImport
	itemPackage // a package clause, pasted with a whole program: dropped
)

// item is one top-level import, declaration or statement of a cell.
type item struct {
	kind       itemKind
	start, end int // byte offsets in the cell
	line, col  int // of start, 1-based
}

// lexeme is one token of a cell.
type lexeme struct {
	pos token.Pos
	tok token.Token
	lit string
}

// splitCell cuts src at its top-level semicolons, written or implied by a
// line end, as the Go scanner sees them. Brackets nest; the semicolons of
// an if, for, switch or select header (`for i := 0; i < n; i++ {`) do not
// cut, nor do those after it on the same line. A scanner error (an
// unterminated string) is returned as is.
func splitCell(src string) ([]item, error) {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	var errs scanner.ErrorList
	var s scanner.Scanner
	s.Init(file, []byte(src), func(pos token.Position, msg string) { errs.Add(pos, msg) }, 0)
	var toks []lexeme
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		toks = append(toks, lexeme{pos, t, lit})
	}
	if errs.Len() > 0 {
		return nil, errs.Err()
	}

	var items []item
	depth, header := 0, false
	first := -1 // index in toks of the current item's first token
	end := func(endOff int) {
		if first < 0 {
			return
		}
		p := fset.Position(toks[first].pos)
		items = append(items, item{
			kind:  kindOf(toks[first:]),
			start: p.Offset,
			end:   trimEnd(src, p.Offset, endOff),
			line:  p.Line,
			col:   p.Column,
		})
		first = -1
	}
	for i, t := range toks {
		if first < 0 && t.tok != token.SEMICOLON {
			first = i
		}
		switch t.tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth--
		case token.FOR, token.IF, token.SWITCH, token.SELECT:
			if depth == 0 {
				header = true
			}
		case token.SEMICOLON:
			if depth != 0 || header && t.lit != "\n" {
				break
			}
			header = false
			end(file.Offset(t.pos))
		}
	}
	end(len(src))
	return items, nil
}

// kindOf classifies an item by its first tokens. A func is a declaration
// when a name follows it, or a receiver and then a name; otherwise it is a
// function literal in a statement (`func() { … }()`).
func kindOf(toks []lexeme) itemKind {
	switch toks[0].tok {
	case token.IMPORT:
		return itemImport
	case token.PACKAGE:
		return itemPackage
	case token.CONST, token.VAR, token.TYPE:
		return itemDecl
	case token.FUNC:
		if len(toks) > 1 && toks[1].tok == token.IDENT {
			return itemDecl
		}
		if len(toks) < 2 || toks[1].tok != token.LPAREN {
			return itemStmt
		}
		depth := 0
		for i := 1; i < len(toks); i++ {
			switch toks[i].tok {
			case token.LPAREN:
				depth++
			case token.RPAREN:
				depth--
				if depth == 0 {
					if i+2 < len(toks) && toks[i+1].tok == token.IDENT && toks[i+2].tok == token.LPAREN {
						return itemDecl // a method: func (r T) Name(
					}
					return itemStmt
				}
			}
		}
	}
	return itemStmt
}

// trimEnd moves end back over the spaces and semicolons that close an
// item.
func trimEnd(src string, start, end int) int {
	for end > start {
		switch src[end-1] {
		case ' ', '\t', '\n', '\r', ';':
			end--
			continue
		}
		break
	}
	return end
}
