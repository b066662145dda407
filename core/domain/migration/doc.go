// Package migration holds the pure rules of taking over a landscape from the previous infrastructure manager (and
// the provisioner before it): which Kyma resources of KEB and which shoots belong together (Match), which KEB labels a
// runtime must carry (CheckLabels), which differences between a live shoot and the shoot generated again from it block
// the takeover (Review), and the report `kim migrate` prints and writes (Report). Reading and writing objects is the
// caller's (operator/migrate); nothing here touches a cluster or reads the clock.
package migration
