// Package filter compiles and evaluates RocketMQ's SQL92 property filters
// (Apache's filter module: an ActiveMQ JMS-selector grammar without
// arithmetic, plus 5.x CONTAINS / STARTSWITH / ENDSWITH).
//
// Grammar (keywords case-insensitive):
//
//	expr       = and { OR and }
//	and        = equality { AND equality }
//	equality   = comparison { "=" comparison | "<>" comparison | IS [NOT] NULL }
//	comparison = unary { (">"|">="|"<"|"<=") unary | [NOT] BETWEEN unary AND unary
//	           | [NOT] IN "(" string { "," string } ")" | [NOT] (CONTAINS|STARTSWITH|ENDSWITH) string }
//	unary      = "+" unary | "-" unary | NOT unary | primary
//	primary    = literal | identifier | "(" expr ")"
//	literal    = 'string' ('' escapes ') | 123 [L] | 1.5 | .5 | 1e3 | TRUE | FALSE | NULL
//
// Owns: Compile (text → Expr, once per subscription) and Expr.Match.
// Never: touches messages or the store; Match reads properties through a
// caller-supplied lookup and does not allocate for plain comparisons.
//
// Invariants (Apache's semantics): property values are strings; a comparison
// with a number converts the string (a failed conversion makes the whole
// evaluation fail, so the message does not match); ">" etc. between two
// strings compare them as doubles; a missing property makes comparisons
// unknown (three-valued logic: NOT unknown is unknown); a message matches only
// when the expression is exactly TRUE.
package filter
