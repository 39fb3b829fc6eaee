// Package domain holds the vocabulary that workflows, activities, the worker
// and the CLI share: the ingestion spec, Kafka offsets, sequences, segment
// identities and the type names of errors that a retry cannot fix. It imports
// nothing of this module, and nothing that does I/O.
package domain
