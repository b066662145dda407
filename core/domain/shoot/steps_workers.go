package shoot

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

const maxWorkerNameLength = 15 // Gardener's limit

var (
	taintEffects = map[string]bool{"NoSchedule": true, "PreferNoSchedule": true, "NoExecute": true}
	// quantity is a positive Kubernetes resource quantity ("10Gi", "500M", "1.5T", "2e9").
	quantity = regexp.MustCompile(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$`)
)

// positiveQuantity accepts Kubernetes quantities above zero.
func positiveQuantity(v string) bool {
	return quantity.MatchString(v) && !zeroQuantity(v)
}

// zeroQuantity reports a quantity whose number is zero ("0", "0Gi", "0.0M").
func zeroQuantity(v string) bool {
	num := strings.TrimRight(v, "KMGTPEikmnu")
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		num = num[:i]
	}
	return strings.Trim(num, "0.") == ""
}

// perNodePodsCIDRBits is the pod CIDR every node gets (Gardener's default node CIDR mask size): it bounds maxPods.
const perNodePodsCIDRBits = 24

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
		if err := nodeStability(in, &out.Worker, currentWorker(in.current, w.Name)); err != nil {
			return err
		}
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
	if err := capMaxPodsTotal(workers, in.rt.Networking.Pods); err != nil {
		return err
	}
	s.Workers = workers
	return nil
}

// capMaxPodsTotal lowers the pools' maxPods, from the last pool backwards and never below 1, until their sum fits
// the usable addresses of the pods CIDR, as the previous infrastructure manager does: adopted shoots carry values
// capped this way, and a sum above the range renders pools whose nodes cannot all get pod ranges. Pools without
// maxPods take the kubelet's default and are not counted. An unparsable or non-IPv4 pods CIDR is the networking
// step's to refuse.
func capMaxPodsTotal(workers []WorkerSpec, pods string) error {
	p, err := netip.ParsePrefix(pods)
	if err != nil || !p.Addr().Is4() || p.Bits() < minPodsCIDRBits {
		return nil
	}
	usable := usableIPv4(p.Bits())
	var sum int64
	for _, w := range workers {
		if w.MaxPods != nil {
			sum += int64(*w.MaxPods)
		}
	}
	excess := sum - usable
	for i := len(workers) - 1; i >= 0 && excess > 0; i-- {
		if mp := workers[i].MaxPods; mp != nil && *mp > 1 {
			cut := min(excess, int64(*mp-1))
			*mp -= int32(cut) //nolint:gosec // G115: cut <= *mp-1, an int32
			excess -= cut
		}
	}
	if excess > 0 {
		return invalid(ReasonInvalidWorker, "spec.shoot.networking.pods",
			"the pods CIDR %s has %d usable addresses, fewer than the pools with maxPods need at one pod each", pods, usable)
	}
	return nil
}

// usableIPv4 is the number of usable addresses of an IPv4 prefix of the given length: all of a /32 or /31 (a host
// route, a point-to-point link), else all but the network and broadcast addresses.
func usableIPv4(bits int) int64 {
	switch {
	case bits >= 32:
		return 1
	case bits == 31:
		return 2
	}
	return int64(1)<<(32-bits) - 2
}

func workerField(i int) string {
	if i == 0 {
		return "spec.shoot.provider.workers[0]"
	}
	return fmt.Sprintf("spec.shoot.provider.additionalWorkers[%d]", i-1)
}

// machineType matches the machine type names of every provider (m6i.large, Standard_D4s_v5, n2-standard-4,
// g_c4_m16, ecs.g6.xlarge): no spaces or other characters a cloud profile never lists.
var machineType = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func validateWorker(w Worker, field string) error {
	switch {
	case w.Name == "":
		return invalid(ReasonMissingField, field+".name", "the pool name must be set")
	case len(w.Name) > maxWorkerNameLength || !dnsLabel.MatchString(w.Name):
		return invalid(ReasonInvalidWorker, field+".name", "%q must be a DNS label of at most %d characters", w.Name, maxWorkerNameLength)
	case w.MachineType == "":
		return invalid(ReasonMissingField, field+".machine.type", "the machine type must be set")
	case !machineType.MatchString(w.MachineType):
		return invalid(ReasonInvalidWorker, field+".machine.type", "%q is not a machine type name (letters, digits, '.', '_', '-')", w.MachineType)
	case w.Minimum < 0 || w.Maximum < w.Minimum:
		return invalid(ReasonInvalidWorker, field+".maximum", "need 0 <= minimum (%d) <= maximum (%d)", w.Minimum, w.Maximum)
	case w.VolumeSize != "" && !positiveQuantity(w.VolumeSize):
		return invalid(ReasonInvalidWorker, field+".volume.size", "%q must be a positive quantity, e.g. 80Gi", w.VolumeSize)
	case w.MaxPods != nil && *w.MaxPods <= 0:
		return invalid(ReasonInvalidWorker, field+".kubernetes.kubelet.maxPods", "must be positive")
	case w.MaxEvictRetries != nil && *w.MaxEvictRetries < 0:
		return invalid(ReasonInvalidWorker, field+".machineControllerManager.maxEvictRetries", "must not be negative")
	}
	if w.MachineDrainTimeout != "" {
		if d, err := time.ParseDuration(w.MachineDrainTimeout); err != nil || d < 0 {
			return invalid(ReasonInvalidWorker, field+".machineControllerManager.machineDrainTimeout", "%q is not a duration like 15m", w.MachineDrainTimeout)
		}
	}
	for j, cr := range w.ContainerRuntimes {
		if cr.Type == "" || !dnsLabel.MatchString(cr.Type) {
			return invalid(ReasonInvalidWorker, fmt.Sprintf("%s.cri.containerRuntimes[%d].type", field, j), "%q is not a container runtime type", cr.Type)
		}
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
