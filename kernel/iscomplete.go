package kernel

import (
	"encoding/json"
	"go/scanner"
	"go/token"
	"strings"
)

// isComplete answers is_complete_request, which a console asks before
// running what was typed: Enter runs a complete cell and adds a line to
// an incomplete one.
func (k *Kernel) isComplete(m *message) {
	var req struct {
		Code string `json:"code"`
	}
	json.Unmarshal(m.content, &req)
	status, indent := completeness(req.Code)
	content := map[string]any{"status": status}
	if status == "incomplete" {
		content["indent"] = indent
	}
	k.reply(k.shell, m, "is_complete_reply", content)
}

// completeness is "complete", "incomplete" (with the indent of the next
// line) or "invalid", from the tokens alone: brackets left open, a raw
// string left open, or a last token that needs an operand (a binary
// operator, a comma, a dot) mean more is coming; a closing bracket
// without its opening one, or a malformed token, can never be completed.
func completeness(code string) (status, indent string) {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(code))
	var errs []string
	var s scanner.Scanner
	s.Init(file, []byte(code), func(_ token.Position, msg string) { errs = append(errs, msg) }, 0)
	var stack []token.Token
	last := token.ILLEGAL
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue
		}
		switch tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			stack = append(stack, tok)
		case token.RPAREN, token.RBRACK, token.RBRACE:
			open := map[token.Token]token.Token{token.RPAREN: token.LPAREN, token.RBRACK: token.LBRACK, token.RBRACE: token.LBRACE}[tok]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return "invalid", ""
			}
			stack = stack[:len(stack)-1]
		}
		last = tok
	}
	for _, e := range errs {
		if strings.Contains(e, "raw string literal not terminated") || strings.Contains(e, "comment not terminated") {
			return "incomplete", ""
		}
		return "invalid", ""
	}
	if len(stack) > 0 {
		return "incomplete", strings.Repeat("\t", len(stack))
	}
	if last.IsOperator() && last != token.RPAREN && last != token.RBRACK && last != token.RBRACE &&
		last != token.INC && last != token.DEC && last != token.SEMICOLON && last != token.ELLIPSIS {
		return "incomplete", ""
	}
	return "complete", ""
}
