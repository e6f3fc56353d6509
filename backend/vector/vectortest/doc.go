// Package vectortest holds what tests of the knowledge bases need: small valid PDFs
// (MinimalPDF).
package vectortest
