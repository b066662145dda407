// Package translate maps between the domain's shoot (core/domain/shoot) and Gardener's Shoot, both ways, without
// I/O: the Shoot to create for a spec (ToShoot), the spec laid over an existing Shoot keeping what others own
// (ApplySpec), the domain's view of an existing Shoot (CurrentFromShoot), the Runtime a Shoot was made from
// (RuntimeFromShoot), and the provider, extension and authentication documents in between. The clients, caches and
// watches that read and write shoots are the parent package's, adapters/gardener; keeping them apart lets the
// golden tests prove the translation alone, byte for byte.
package translate
