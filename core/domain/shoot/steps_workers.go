package shoot

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const maxWorkerNameLength = 15 // Gardener's limit

var (
	volumeSize   = regexp.MustCompile(`^[0-9]+Gi$`)
	taintEffects = map[string]bool{"NoSchedule": true, "PreferNoSchedule": true, "NoExecute": true}
)

// stepWorkers applies image defaults, zone order and version rules to every pool. On update, pools
// missing from the Runtime are dropped, which is what removes them from the shoot.
func stepWorkers(in input, s *Spec) error {
	if len(in.rt.Workers) == 0 {
		return invalid(ReasonMissingField, "spec.shoot.provider.workers", "at least one worker pool is required")
	}
	legacy := isLegacyAzure(in)
	seen := map[string]bool{}
	var workers []WorkerSpec
	for i, w := range in.rt.Workers {
		field := workerField(i)
		if err := validateWorker(w, field); err != nil {
			return err
		}
		if seen[w.Name] {
			return invalid(ReasonDuplicateWorker, field+".name", "worker pool %q is defined twice", w.Name)
		}
		seen[w.Name] = true
		if err := validateZones(in.rt.Provider, in.rt.Region, w.Zones, field+".zones"); err != nil {
			return err
		}
		out := WorkerSpec{Worker: cloneWorker(w), IMDSv2: in.rt.Provider == AWS && in.cfg.Features.AWSIMDSv2}
		if out.ImageName == "" {
			out.ImageName = in.cfg.DefaultMachineImage.Name
			if out.ImageVersion == "" {
				out.ImageVersion = in.cfg.DefaultMachineImage.Version
			}
		} else if out.ImageVersion == "" && out.ImageName == in.cfg.DefaultMachineImage.Name {
			out.ImageVersion = in.cfg.DefaultMachineImage.Version
		}
		if out.ImageName == "" {
			return invalid(ReasonInvalidConfig, "shoot.defaultMachineImage.name", "worker pool %q has no machine image and no default is configured", w.Name)
		}
		if cur := currentWorker(in.current, w.Name); cur != nil {
			if cur.ImageName == out.ImageName {
				out.ImageVersion = notLower(out.ImageVersion, cur.ImageVersion)
			}
			out.Zones = mergeZones(cur.Zones, out.Zones)
			if legacy {
				out.Zones = slices.Clone(cur.Zones)
			}
		} else if legacy {
			out.Zones = nil
		}
		if out.Maximum > 0 && int(out.Maximum) < len(out.Zones) {
			return invalid(ReasonInvalidWorker, field+".maximum",
				"maximum %d is lower than the number of zones (%d): every zone needs at least one node", out.Maximum, len(out.Zones))
		}
		workers = append(workers, out)
	}
	if !slices.ContainsFunc(workers, func(w WorkerSpec) bool { return w.Maximum > 0 }) {
		return invalid(ReasonInvalidWorker, "spec.shoot.provider.workers", "at least one pool needs maximum > 0")
	}
	if n := len(zonesOf(workers)); n > MaxZones {
		return invalid(ReasonTooManyZones, "spec.shoot.provider.workers", "the pools span %d zones; at most %d are supported", n, MaxZones)
	}
	s.Workers = workers
	return nil
}

func workerField(i int) string {
	if i == 0 {
		return "spec.shoot.provider.workers[0]"
	}
	return fmt.Sprintf("spec.shoot.provider.additionalWorkers[%d]", i-1)
}

func validateWorker(w Worker, field string) error {
	switch {
	case w.Name == "":
		return invalid(ReasonMissingField, field+".name", "the pool name must be set")
	case len(w.Name) > maxWorkerNameLength || !dnsLabel.MatchString(w.Name):
		return invalid(ReasonInvalidWorker, field+".name", "%q must be a DNS label of at most %d characters", w.Name, maxWorkerNameLength)
	case w.MachineType == "":
		return invalid(ReasonMissingField, field+".machine.type", "the machine type must be set")
	case w.Minimum < 0 || w.Maximum < w.Minimum:
		return invalid(ReasonInvalidWorker, field+".maximum", "need 0 <= minimum (%d) <= maximum (%d)", w.Minimum, w.Maximum)
	case w.VolumeSize != "" && !volumeSize.MatchString(w.VolumeSize):
		return invalid(ReasonInvalidWorker, field+".volume.size", "%q must be a whole number of Gi, e.g. 80Gi", w.VolumeSize)
	case w.MaxPods != nil && *w.MaxPods <= 0:
		return invalid(ReasonInvalidWorker, field+".kubernetes.kubelet.maxPods", "must be positive")
	}
	surge, err := intOrPercent(w.MaxSurge, field+".maxSurge", false)
	if err != nil {
		return err
	}
	unavailable, err := intOrPercent(w.MaxUnavailable, field+".maxUnavailable", true)
	if err != nil {
		return err
	}
	// Gardener defaults maxSurge to 1 and maxUnavailable to 0; both zero would stall rollouts.
	if w.MaxSurge == "" {
		surge = 1
	}
	if surge == 0 && unavailable == 0 {
		return invalid(ReasonInvalidWorker, field+".maxUnavailable", "maxSurge and maxUnavailable must not both be 0")
	}
	for j, t := range w.Taints {
		if t.Key == "" || !taintEffects[t.Effect] {
			return invalid(ReasonInvalidWorker, fmt.Sprintf("%s.taints[%d]", field, j),
				"a taint needs a key and an effect of NoSchedule, PreferNoSchedule or NoExecute")
		}
	}
	return nil
}

// intOrPercent parses "3" or "25%"; empty is 0.
func intOrPercent(v, field string, atMost100Percent bool) (int, error) {
	if v == "" {
		return 0, nil
	}
	num, isPercent := strings.CutSuffix(v, "%")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || (isPercent && atMost100Percent && n > 100) {
		return 0, invalid(ReasonInvalidWorker, field, "%q must be a non-negative number or percentage", v)
	}
	return n, nil
}

// validateZones checks zone names against the region: Azure zones are numbers 1..8, other
// providers name zones after the region plus a suffix (eu-west-1a, europe-west3-b).
func validateZones(p Provider, region string, zones []string, field string) error {
	if len(zones) == 0 {
		return invalid(ReasonNoZones, field, "at least one zone is required")
	}
	seen := map[string]bool{}
	for _, z := range zones {
		if seen[z] {
			return invalid(ReasonZoneNotInRegion, field, "zone %q is listed twice", z)
		}
		seen[z] = true
		if p == Azure {
			if n, err := strconv.Atoi(z); err != nil || n < 1 || n > MaxZones || strconv.Itoa(n) != z {
				return invalid(ReasonZoneNotInRegion, field, "azure zone %q must be a number from 1 to %d", z, MaxZones)
			}
			continue
		}
		if !strings.HasPrefix(z, region) || len(z) == len(region) || !dnsLabel.MatchString(z) {
			return invalid(ReasonZoneNotInRegion, field, "zone %q is not a zone of region %q", z, region)
		}
	}
	return nil
}

// mergeZones keeps the current zones in their order and appends new ones: Gardener rejects reordering.
func mergeZones(current, desired []string) []string {
	out := slices.Clone(current)
	for _, z := range desired {
		if !slices.Contains(out, z) {
			out = append(out, z)
		}
	}
	return out
}

// zonesOf returns all zones of the pools in order of first appearance.
func zonesOf(workers []WorkerSpec) []string {
	var zones []string
	for _, w := range workers {
		zones = mergeZones(zones, w.Zones)
	}
	return zones
}

func currentWorker(c *Current, name string) *CurrentWorker {
	if c == nil {
		return nil
	}
	for i := range c.Workers {
		if c.Workers[i].Name == name {
			return &c.Workers[i]
		}
	}
	return nil
}

// isLegacyAzure reports an existing Azure cluster whose infrastructure has no zones: it stays as it is.
func isLegacyAzure(in input) bool {
	return in.rt.Provider == Azure && in.current != nil && in.current.HasInfrastructureConfig && len(in.current.InfrastructureZones) == 0
}

func cloneWorker(w Worker) Worker {
	w.Zones = slices.Clone(w.Zones)
	w.Labels = maps.Clone(w.Labels)
	w.Annotations = maps.Clone(w.Annotations)
	w.Taints = slices.Clone(w.Taints)
	if w.MaxPods != nil {
		v := *w.MaxPods
		w.MaxPods = &v
	}
	return w
}
