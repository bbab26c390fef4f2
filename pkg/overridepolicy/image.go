// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

// The grammar of a container image reference, as the distribution project defines it
// (and as Karmada parses images):
//
//	reference        := name [ ":" tag ] [ "@" digest ]
//	name             := [domain "/"] path-component ["/" path-component]*
//	domain           := host [":" port-number]
//	host             := domain-name | "[" IPv6address "]"
//	domain-name      := domain-component ["." domain-component]*
//	domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
//	path-component   := /[a-z0-9]+/ [separator /[a-z0-9]+/]*
//	separator        := /[_.]|__|[-]+/
//	tag              := /[\w][\w.-]{0,127}/
//	digest           := algorithm ":" hex   (sha256: 64, sha384: 96, sha512: 128 lowercase hex digits)
const (
	imgPathComponent   = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	imgDomainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	imgDomain          = `(?:` + imgDomainComponent + `(?:\.` + imgDomainComponent + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
	imgName            = `(?:` + imgDomain + `/)?` + imgPathComponent + `(?:/` + imgPathComponent + `)*`
	imgTag             = `[\w][\w.-]{0,127}`
	imgDigest          = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[[:xdigit:]]{32,}`
)

var (
	imageReferenceRE = regexp.MustCompile(`^(` + imgName + `)(?::(` + imgTag + `))?(?:@(` + imgDigest + `))?$`)
	imageTagRE       = regexp.MustCompile(`^` + imgTag + `$`)
	imageDigestRE    = regexp.MustCompile(`^` + imgDigest + `$`)
	imageDomainRE    = regexp.MustCompile(`^` + imgDomain + `$`)
	lowerHexRE       = regexp.MustCompile(`^[a-f0-9]+$`)

	digestHexLength = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

	errImageFormat = errors.New("invalid reference format")
)

// maxImageNameLength is the longest name (registry and repository) a reference may have.
const maxImageNameLength = 255

// image is a parsed container image reference: [registry/]repository[:tag][@digest].
type image struct {
	// registry is the host (and port) of the registry, empty when the reference names
	// none: the first path component counts as a registry only when it contains "." or
	// ":", is "localhost", or has upper-case letters.
	registry string
	// repository is the rest of the name, e.g. "library/nginx".
	repository string
	tag        string
	digest     string
}

// parseImage parses a reference without normalising it: "nginx" stays "nginx".
func parseImage(ref string) (image, error) {
	if ref == "" {
		return image{}, errors.New("repository name must have at least one component")
	}
	m := imageReferenceRE.FindStringSubmatch(ref)
	if m == nil {
		if imageReferenceRE.MatchString(strings.ToLower(ref)) {
			return image{}, errors.New("repository name must be lowercase")
		}
		return image{}, errImageFormat
	}
	name, tag, digest := m[1], m[2], m[3]
	if len(name) > maxImageNameLength {
		return image{}, fmt.Errorf("repository name must not be more than %d characters", maxImageNameLength)
	}
	if digest != "" {
		if err := validateDigest(digest); err != nil {
			return image{}, err
		}
	}
	img := image{repository: name, tag: tag, digest: digest}
	if first, rest, ok := strings.Cut(name, "/"); ok &&
		(strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		img.registry, img.repository = first, rest
	}
	return img, nil
}

func validateDigest(digest string) error {
	algorithm, hex, _ := strings.Cut(digest, ":")
	want, ok := digestHexLength[algorithm]
	if !ok {
		return fmt.Errorf("unsupported digest algorithm %q", algorithm)
	}
	if len(hex) != want || !lowerHexRE.MatchString(hex) {
		return fmt.Errorf("invalid %s digest %q", algorithm, hex)
	}
	return nil
}

func (img image) String() string {
	s := img.repository
	if img.registry != "" {
		s = img.registry + "/" + s
	}
	if img.tag != "" {
		s += ":" + img.tag
	}
	if img.digest != "" {
		s += "@" + img.digest
	}
	return s
}

// tagOrDigest is the part after the name that the Tag component stands for.
func (img image) tagOrDigest() string {
	if img.tag != "" {
		return img.tag
	}
	return img.digest
}

// setTagOrDigest sets the Tag component: a tag replaces tag and digest, so does a digest.
func (img *image) setTagOrDigest(v string) error {
	switch {
	case imageTagRE.MatchString(v):
		img.tag, img.digest = v, ""
	case imageDigestRE.MatchString(v):
		if err := validateDigest(v); err != nil {
			return err
		}
		img.tag, img.digest = "", v
	default:
		return fmt.Errorf("%q is neither a valid tag nor a valid digest", v)
	}
	return nil
}

// overrideImage returns ref with o applied. Operators follow Karmada: add appends the
// value to the component (the registry "registry.k8s.io" plus "-mirror" becomes
// "registry.k8s.io-mirror"), replace sets it and remove clears it. The Tag component
// stands for the tag, or the digest when there is no tag: setting it to a tag drops the
// digest and vice versa, and removing it removes both.
//
// A reference with both a tag and a digest loses its digest whichever component is
// overridden, as in Karmada (imageparser.Parse keeps the tag alone): the image a switch
// from Karmada writes is the same, so no pod rolls. karmada-io/karmada#7886 (open) would
// keep the digest; when it lands, this follows.
//
// One deliberate difference from Karmada: a Tag value that is neither a tag nor a digest, or an override whose result is not a
// valid reference (an emptied repository, a registry with a space), is an error rather
// than silently leaving the image alone (Karmada, for Tag) or writing a broken one.
func overrideImage(ref string, o *policyv1alpha1.ImageOverrider) (string, error) {
	img, err := parseImage(ref)
	if err != nil {
		if errors.Is(err, errImageFormat) {
			return "", fmt.Errorf("invalid image reference %q", ref)
		}
		return "", fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	if img.tag != "" {
		img.digest = ""
	}
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace, policyv1alpha1.OverriderOpRemove:
	default:
		return "", fmt.Errorf("unsupported operator %q", o.Operator)
	}
	switch o.Component {
	case policyv1alpha1.Registry:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			img.registry += o.Value
		case policyv1alpha1.OverriderOpReplace:
			img.registry = o.Value
		case policyv1alpha1.OverriderOpRemove:
			img.registry = ""
		}
		if img.registry != "" && !imageDomainRE.MatchString(img.registry) {
			return "", fmt.Errorf("overriding image %q: %q is not a valid registry", ref, img.registry)
		}
	case policyv1alpha1.Repository:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			img.repository += o.Value
		case policyv1alpha1.OverriderOpReplace:
			img.repository = o.Value
		case policyv1alpha1.OverriderOpRemove:
			img.repository = ""
		}
	case policyv1alpha1.Tag:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			err = img.setTagOrDigest(img.tagOrDigest() + o.Value)
		case policyv1alpha1.OverriderOpReplace:
			err = img.setTagOrDigest(o.Value)
		case policyv1alpha1.OverriderOpRemove:
			img.tag, img.digest = "", ""
		}
		if err != nil {
			return "", fmt.Errorf("overriding the tag of image %q: %w", ref, err)
		}
	default:
		return "", fmt.Errorf("unsupported image component %q", o.Component)
	}
	out := img.String()
	if _, err := parseImage(out); err != nil {
		return "", fmt.Errorf("overriding image %q gives an invalid image reference %q", ref, out)
	}
	return out, nil
}

// podSpecPaths are the pod specs whose containers' images (and commands and args) the
// overriders change when no path is given, per kind, as in Karmada. Only "containers"
// are changed, not "initContainers" or "ephemeralContainers"; other kinds are left alone.
var podSpecPaths = map[string][]string{
	"Pod":         {"spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"Deployment":  {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
}

// containersOf returns the containers of obj's pod spec, nil when obj's kind has no
// known pod spec or it has no containers.
func containersOf(obj *unstructured.Unstructured) ([]any, []string, error) {
	path, ok := podSpecPaths[obj.GetKind()]
	if !ok {
		return nil, nil, nil
	}
	path = append(slices.Clone(path), "containers")
	containers, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil {
		return nil, path, fmt.Errorf("reading /%s: %w", strings.Join(path, "/"), err)
	}
	if !found || containers == nil {
		return nil, path, nil
	}
	list, ok := containers.([]any)
	if !ok {
		return nil, path, fmt.Errorf("%s is not a list", "/"+strings.Join(path, "/"))
	}
	return list, path, nil
}

// applyImageOverrider applies o to obj: to the image at o.Predicate.Path, or, without a
// predicate, to the image of every container of the pod spec of a Pod, ReplicaSet,
// Deployment, DaemonSet, StatefulSet or Job.
func applyImageOverrider(obj *unstructured.Unstructured, o *policyv1alpha1.ImageOverrider) error {
	if o.Predicate != nil {
		v, found, err := pointerGet(obj.Object, o.Predicate.Path)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("image path %q not found", o.Predicate.Path)
		}
		ref, ok := v.(string)
		if !ok {
			return fmt.Errorf("image path %q does not hold a string", o.Predicate.Path)
		}
		out, err := overrideImage(ref, o)
		if err != nil {
			return err
		}
		return pointerReplace(obj.Object, o.Predicate.Path, out)
	}
	containers, path, err := containersOf(obj)
	if err != nil {
		return err
	}
	for i, c := range containers {
		container, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("/%s/%d is not an object", strings.Join(path, "/"), i)
		}
		ref, _ := container["image"].(string)
		out, err := overrideImage(ref, o)
		if err != nil {
			return err
		}
		container["image"] = out
	}
	return nil
}

// ValidImageReference says whether ref is a container image reference an image overrider
// accepts (and may produce): [registry/]repository[:tag][@digest].
func ValidImageReference(ref string) error {
	_, err := parseImage(ref)
	return err
}
