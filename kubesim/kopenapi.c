/*
 * kopenapi.c: the OpenAPI v3 components of kubesim's kinds (kopenapi.h).
 * A built-in kind's schema is written below in a small outline: one field
 * per line, two spaces of indent per level, then "name type: text" with
 * type s (string), i (integer), b (boolean), o (object), [o / [s (array
 * of objects / strings), {s (map of strings); parsed into a JSON schema
 * on use.  The fields are the API's main ones, described in our words.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/xmalloc.h"
#include "kubesim/kopenapi.h"
#include "kubesim/kschema.h"

#define META_REF "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

struct outline {
	const char *group, *kind, *desc, *fields;
};

/* A container's fields at indent I, a pod spec's at indent I. */
#define CONTAINER(I)                                                          \
	I "name s: Name of the container, unique within the pod.\n" I         \
	  "image s: Container image name.\n" I                                \
	  "command [s: Entrypoint array; the image's ENTRYPOINT when "        \
	  "unset.\n" I "args [s: Arguments to the entrypoint.\n" I            \
	  "env [o: Environment variables to set in the container.\n" I        \
	  " name s: Name of the variable.\n" I " value s: Its value.\n" I     \
	  " valueFrom o: A source for the value (a Secret or ConfigMap key, " \
	  "a field).\n" I "ports [o: Ports to expose from the container.\n" I \
	  " containerPort i: Port number on the pod's IP address.\n" I        \
	  " name s: Name of the port.\n" I                                    \
	  " protocol s: TCP (default), UDP or SCTP.\n" I                      \
	  "resources o: Compute resources required by this container.\n" I    \
	  "volumeMounts [o: Volumes to mount into the container.\n" I         \
	  "imagePullPolicy s: Always, Never or IfNotPresent.\n" I             \
	  "securityContext o: Security options the container runs with.\n"

#define POD_SPEC(I)                                                           \
	I "containers [o: The containers of the pod.\n" CONTAINER(I " ") I    \
	        "initContainers [o: Containers run in order before the "      \
	        "others.\n" I                                                 \
	        "restartPolicy s: Always, OnFailure or Never.\n" I            \
	        "serviceAccountName s: The ServiceAccount the pod runs "      \
	        "as.\n" I "volumes [o: Volumes the containers can mount.\n" I \
	        "nodeName s: The node the pod is bound to.\n" I               \
	        "securityContext o: Pod-level security attributes.\n"

static const struct outline outlines[] = {
	{ "", "Namespace", "Namespace provides a scope for Names.",
	        " spec o: Spec defines the behavior of the Namespace.\n"
	        "  finalizers [s: Finalizers that must be empty before the "
	        "namespace is removed.\n"
	        " status o: Status describes the current status of a "
	        "Namespace.\n"
	        "  phase s: Active or Terminating.\n" },
	{ "", "ConfigMap",
	        "ConfigMap holds configuration data for pods to "
	        "consume.",
	        " data {s: Configuration data; keys are file-name-like.\n"
	        " binaryData {s: Binary data, base64-encoded.\n"
	        " immutable b: If true, the data cannot be updated.\n" },
	{ "", "Secret", "Secret holds secret data of a certain type.",
	        " data {s: Secret data, base64-encoded.\n"
	        " stringData {s: Write-only plain-text data, merged into "
	        "data on write.\n"
	        " type s: Used to facilitate programmatic handling of secret "
	        "data (default Opaque).\n"
	        " immutable b: If true, the data cannot be updated.\n" },
	{ "", "ServiceAccount",
	        "ServiceAccount binds together a name, "
	        "secrets and an identity for pods.",
	        " secrets [o: Secrets pods running as this account may use.\n"
	        " imagePullSecrets [o: Secrets for pulling images.\n"
	        " automountServiceAccountToken b: Whether pods get an API "
	        "token mounted.\n" },
	{ "", "Service",
	        "Service is a named abstraction of a network "
	        "service, a set of ports and a selector over pods.",
	        " spec o: Spec defines the behavior of the service.\n"
	        "  type s: ClusterIP (default), NodePort, LoadBalancer or "
	        "ExternalName.\n"
	        "  selector {s: Route traffic to pods with these labels.\n"
	        "  ports [o: The ports exposed by the service.\n"
	        "   name s: Name of this port.\n"
	        "   port i: The port the service exposes.\n"
	        "   targetPort s: Number or name of the port on the pods.\n"
	        "   protocol s: TCP (default), UDP or SCTP.\n"
	        "   nodePort i: The port on each node (NodePort, "
	        "LoadBalancer).\n"
	        "  clusterIP s: The IP address of the service.\n"
	        " status o: Most recently observed status of the service.\n"
	        "  loadBalancer o: The load balancer's status, if any.\n" },
	{ "", "Pod",
	        "Pod is a collection of containers that can run on a "
	        "host.",
	        " spec o: Specification of the desired behavior of the "
	        "pod.\n" POD_SPEC("  ") " status o: Most recently observed "
	                                "status of the pod.\n"
	                                "  phase s: Pending, Running, "
	                                "Succeeded, Failed or Unknown.\n"
	                                "  podIP s: The IP address allocated "
	                                "to the pod.\n"
	                                "  conditions [o: Current service "
	                                "state of the pod.\n"
	                                "  containerStatuses [o: One entry "
	                                "per container.\n"
	                                "   name s: The container's name.\n"
	                                "   ready b: Whether it passed its "
	                                "readiness probe.\n"
	                                "   restartCount i: How many times it "
	                                "was restarted.\n"
	                                "   state o: Its current condition "
	                                "(waiting, running, "
	                                "terminated).\n" },
	{ "", "Event",
	        "Event is a report of an event somewhere in the "
	        "cluster.",
	        " involvedObject o: The object this event is about.\n"
	        "  kind s: Kind of the referent.\n"
	        "  name s: Name of the referent.\n"
	        "  namespace s: Namespace of the referent.\n"
	        " reason s: A short, machine-understandable reason for the "
	        "transition.\n"
	        " message s: A human-readable description of the status.\n"
	        " type s: Normal or Warning.\n"
	        " count i: The number of times this event has occurred.\n"
	        " firstTimestamp s: When it was first recorded.\n"
	        " lastTimestamp s: When it was most recently recorded.\n"
	        " source o: The component reporting this event.\n" },
	{ "apps", "Deployment",
	        "Deployment enables declarative updates for "
	        "Pods and ReplicaSets.",
	        " spec o: Specification of the desired behavior of the "
	        "Deployment.\n"
	        "  replicas i: Number of desired pods (default 1).\n"
	        "  selector o: Label selector for the pods.\n"
	        "  strategy o: How to replace existing pods with new ones.\n"
	        "  template o: The pods that will be created.\n"
	        "   metadata o: The pods' metadata.\n"
	        "   spec o: The pods' specification.\n" POD_SPEC(
	                "    ") " status o: Most recently observed status of "
	                        "the "
	                        "Deployment.\n"
	                        "  replicas i: Pods targeted by this "
	                        "deployment.\n"
	                        "  readyReplicas i: Pods with a Ready "
	                        "condition.\n"
	                        "  availableReplicas i: Pods available for at "
	                        "least "
	                        "minReadySeconds.\n"
	                        "  updatedReplicas i: Pods with the desired "
	                        "template.\n" },
	{ "batch", "Job", "Job represents the configuration of a single job.",
	        " spec o: Specification of the desired behavior of a job.\n"
	        "  backoffLimit i: Retries before marking the job failed.\n"
	        "  completions i: Successfully finished pods wanted.\n"
	        "  activeDeadlineSeconds i: Duration limit of the job.\n"
	        "  ttlSecondsAfterFinished i: Lifetime of a finished job.\n"
	        "  template o: The pods that will be created.\n"
	        "   metadata o: The pods' metadata.\n"
	        "   spec o: The pods' specification.\n" POD_SPEC(
	                "    ") " status o: Current status of a job.\n"
	                        "  active i: Pending and running pods.\n"
	                        "  succeeded i: Pods that reached phase "
	                        "Succeeded.\n"
	                        "  failed i: Pods that reached phase Failed.\n"
	                        "  startTime s: When the job controller "
	                        "started the job.\n"
	                        "  completionTime s: When the job completed.\n"
	                        "  conditions [o: The latest observations of "
	                        "the job's "
	                        "state.\n" },
	{ "coordination.k8s.io", "Lease", "Lease defines a lease concept.",
	        " spec o: Specification of the Lease.\n"
	        "  holderIdentity s: The identity of the holder.\n"
	        "  leaseDurationSeconds i: How long a candidate waits to "
	        "force-acquire it.\n"
	        "  acquireTime s: When the current lease was acquired.\n"
	        "  renewTime s: When the holder last updated it.\n"
	        "  leaseTransitions i: Transitions between holders.\n" },
	{ "", "PersistentVolumeClaim",
	        "PersistentVolumeClaim is a user's "
	        "request for and claim to a "
	        "persistent volume.",
	        " spec o: The desired characteristics of a volume.\n"
	        "  accessModes [s: ReadWriteOnce, ReadOnlyMany, "
	        "ReadWriteMany, ReadWriteOncePod.\n"
	        "  resources o: The minimum resources the volume should "
	        "have.\n"
	        "  storageClassName s: The StorageClass required.\n"
	        " status o: The current status of the claim.\n"
	        "  phase s: Pending, Bound or Lost.\n" },
	{ "rbac.authorization.k8s.io", "Role",
	        "Role is a namespaced, logical "
	        "grouping of PolicyRules.",
	        " rules [o: All the PolicyRules of this Role.\n"
	        "  apiGroups [s: The API groups of the resources.\n"
	        "  resources [s: The resources the rule applies to.\n"
	        "  verbs [s: The verbs allowed.\n"
	        "  resourceNames [s: An optional allow-list of names.\n" },
	{ "rbac.authorization.k8s.io", "ClusterRole",
	        "ClusterRole is a cluster-level, logical grouping of "
	        "PolicyRules.",
	        " rules [o: All the PolicyRules of this ClusterRole.\n"
	        "  apiGroups [s: The API groups of the resources.\n"
	        "  resources [s: The resources the rule applies to.\n"
	        "  verbs [s: The verbs allowed.\n" },
	{ "rbac.authorization.k8s.io", "RoleBinding",
	        "RoleBinding grants the permissions of a Role or ClusterRole "
	        "to subjects within a namespace.",
	        " roleRef o: The Role or ClusterRole granted.\n"
	        "  kind s: Role or ClusterRole.\n"
	        "  name s: Its name.\n"
	        " subjects [o: The users, groups or service accounts.\n"
	        "  kind s: User, Group or ServiceAccount.\n"
	        "  name s: Name of the subject.\n"
	        "  namespace s: Its namespace (ServiceAccount).\n" },
	{ "rbac.authorization.k8s.io", "ClusterRoleBinding",
	        "ClusterRoleBinding grants the permissions of a ClusterRole "
	        "cluster-wide.",
	        " roleRef o: The ClusterRole granted.\n"
	        " subjects [o: The users, groups or service accounts.\n" },
};

static json_object *
prop(const char *type, const char *desc)
{
	json_object *p = json_object_new_object(), *items;

	if (type[0] == '[' || type[0] == '{') {
		items = json_object_new_object();
		json_object_object_add(items, "type",
		        json_object_new_string(type[1] == 'o' ? "object"
		                        : type[1] == 'i'      ? "integer"
		                                              : "string"));
		json_object_object_add(p, "type",
		        json_object_new_string(
		                type[0] == '[' ? "array" : "object"));
		json_object_object_add(p,
		        type[0] == '[' ? "items" : "additionalProperties",
		        items);
	} else {
		json_object_object_add(p, "type",
		        json_object_new_string(type[0] == 'o' ? "object"
		                        : type[0] == 'i'      ? "integer"
		                        : type[0] == 'b'      ? "boolean"
		                                              : "string"));
	}
	json_object_object_add(p, "description", json_object_new_string(desc));
	return (p);
}

/* The object schema a property's children go into. */
static json_object *
props_of(json_object *p)
{
	json_object *holder = json_object_object_get(p, "items");
	json_object *pr;

	if (holder == NULL || !json_object_is_type(holder, json_type_object)) {
		holder = p;
	}
	pr = json_object_object_get(holder, "properties");
	if (pr == NULL) {
		pr = json_object_new_object();
		json_object_object_add(holder, "properties", pr);
	}
	return (pr);
}

/* Parses an outline into root's properties. */
static void
parse_outline(json_object *root, const char *text)
{
	json_object *stack[16] = { root };
	char *copy = xstrdup(text), *save = NULL;

	for (char *l = strtok_r(copy, "\n", &save); l != NULL;
	        l = strtok_r(NULL, "\n", &save)) {
		size_t depth = strspn(l, " ");
		char *name = l + depth, *type, *desc;
		json_object *p;

		type = strchr(name, ' ');
		desc = type != NULL ? strstr(type, ": ") : NULL;
		if (type == NULL || desc == NULL || depth == 0 || depth > 15) {
			continue;
		}
		*type++ = '\0';
		*desc = '\0';
		p = prop(type, desc + 2);
		json_object_object_add(props_of(stack[depth - 1]), name, p);
		stack[depth] = p;
	}
	free(copy);
}

static void
base_fields(json_object *schema)
{
	json_object *pr = props_of(schema), *meta, *allof, *ref;

	json_object_object_add(pr, "apiVersion",
	        prop("s",
	                "APIVersion defines the versioned schema of this "
	                "representation of an object."));
	json_object_object_add(pr, "kind",
	        prop("s",
	                "Kind is a string value representing the REST "
	                "resource this object represents."));
	meta = json_object_new_object();
	allof = json_object_new_array();
	ref = json_object_new_object();
	json_object_object_add(ref, "$ref",
	        json_object_new_string("#/components/schemas/" META_REF));
	json_object_array_add(allof, ref);
	json_object_object_add(meta, "allOf", allof);
	json_object_object_add(meta, "description",
	        json_object_new_string("Standard object's metadata."));
	json_object_object_add(meta, "default", json_object_new_object());
	json_object_object_add(pr, "metadata", meta);
}

static json_object *
object_meta(void)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "type", json_object_new_string("object"));
	json_object_object_add(m, "description",
	        json_object_new_string("ObjectMeta is metadata that all "
	                               "persisted resources must have."));
	parse_outline(m,
	        " name s: Name must be unique within a namespace.\n"
	        " namespace s: The namespace the object belongs to.\n"
	        " generateName s: A prefix the server uses to generate a "
	        "unique name.\n"
	        " labels {s: Map of string keys and values for selecting "
	        "objects.\n"
	        " annotations {s: Unstructured key value map of "
	        "non-identifying data.\n"
	        " uid s: The unique identifier of this object over time.\n"
	        " resourceVersion s: An opaque value for optimistic "
	        "concurrency and watches.\n"
	        " generation i: A sequence number of the desired state.\n"
	        " creationTimestamp s: When the object was created (RFC "
	        "3339).\n"
	        " deletionTimestamp s: When the object will be deleted.\n"
	        " finalizers [s: Conditions that must be met before the "
	        "object is deleted.\n"
	        " ownerReferences [o: The objects this one depends on.\n"
	        "  apiVersion s: API version of the referent.\n"
	        "  kind s: Kind of the referent.\n"
	        "  name s: Name of the referent.\n"
	        "  uid s: UID of the referent.\n"
	        "  controller b: Whether the referent is the managing "
	        "controller.\n");
	return (m);
}

char *
kopenapi_name(const struct kres *r)
{
	const char *g = r->group;
	char buf[256] = "";
	const char *end = g + strlen(g);

	if (r->flags & KRES_CUSTOM) {
		/* the group's labels reversed: sympozium.ai -> ai.sympozium */
		size_t n = 0;

		while (end > g) {
			const char *dot = end;

			while (dot > g && dot[-1] != '.') {
				dot--;
			}
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			        "%s%.*s", n > 0 ? "." : "", (int)(end - dot),
			        dot);
			end = dot > g ? dot - 1 : g;
			if (n >= sizeof(buf)) {
				break;
			}
		}
		return (xasprintf("%s.%s.%s", buf, r->version, r->kind));
	}
	if (strcmp(g, "apiextensions.k8s.io") == 0) {
		return (xasprintf("io.k8s.apiextensions-apiserver.pkg.apis."
		                  "apiextensions.%s.%s",
		        r->version, r->kind));
	}
	return (xasprintf("io.k8s.api.%.*s.%s.%s",
	        g[0] == '\0' ? 4 : (int)strcspn(g, "."),
	        g[0] == '\0' ? "core" : g, r->version, r->kind));
}

static const struct outline *
outline_of(const struct kres *r)
{
	for (size_t i = 0; i < sizeof(outlines) / sizeof(outlines[0]); i++) {
		if (strcmp(outlines[i].group, r->group) == 0
		        && strcmp(outlines[i].kind, r->kind) == 0) {
			return (&outlines[i]);
		}
	}
	return (NULL);
}

static json_object *
builtin_schema(const struct kres *r)
{
	const struct outline *o = outline_of(r);
	json_object *s = json_object_new_object();
	char *desc;

	json_object_object_add(s, "type", json_object_new_string("object"));
	desc = o != NULL ? xstrdup(o->desc)
	                 : xasprintf("%s: kubesim stores its fields without a "
	                             "detailed schema.",
	                         r->kind);
	json_object_object_add(s, "description", json_object_new_string(desc));
	free(desc);
	base_fields(s);
	if (o != NULL) {
		parse_outline(s, o->fields);
	}
	return (s);
}

static json_object *
custom_schema(const struct kres *r)
{
	json_object *s = NULL;

	if (r->schema != NULL) {
		json_object_deep_copy(kschema_root(r->schema), &s, NULL);
	}
	if (s == NULL) {
		s = json_object_new_object();
		json_object_object_add(
		        s, "type", json_object_new_string("object"));
	}
	base_fields(s);
	return (s);
}

void
kopenapi_add(json_object *schemas, const struct kres *r)
{
	json_object *s = (r->flags & KRES_CUSTOM) ? custom_schema(r)
	                                          : builtin_schema(r);
	json_object *gvks = json_object_new_array(), *gvk;
	char *name = kopenapi_name(r);

	gvk = json_object_new_object();
	json_object_object_add(gvk, "group", json_object_new_string(r->group));
	json_object_object_add(gvk, "kind", json_object_new_string(r->kind));
	json_object_object_add(
	        gvk, "version", json_object_new_string(r->version));
	json_object_array_add(gvks, gvk);
	json_object_object_add(s, "x-kubernetes-group-version-kind", gvks);
	json_object_object_add(schemas, name, s);
	free(name);
	if (json_object_object_get(schemas, META_REF) == NULL) {
		json_object_object_add(schemas, META_REF, object_meta());
	}
}
