// Package house holds no code: its tests check rules that span the module's
// packages and that no compiler enforces (one name per thing: no exported
// alias or re-exported constant outside an allow-list with its reason; a
// kind's name spelt as a literal outside internal/kinds only where it is a
// release flavour or tool, with its reason).
// The import rules live beside the packages they guard
// (internal/kinds/imports_test.go, internal/infra/imports_test.go).
package house
