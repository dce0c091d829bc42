/*
 * test_takeover_all.c: the operator started on a namespace that
 * upstream's operator (008266e) has brought to rest (test_takeover.c
 * covers MCPServer).  The fixtures are built below, in C, from upstream's
 * internal/controller/ Go files (each says which function it comes from),
 * before any sympoziumd runs: two SkillPacks and their ConfigMaps, a
 * SympoziumPolicy with boundInstances, a SympoziumInstance with slack
 * and WhatsApp channel Deployments (and the WhatsApp PVC), its memory
 * ConfigMap, PVC, Deployment and Service and its status, AgentRuns Succeeded
 * (Job, pod, input ConfigMap), Failed, Running (active Job, running pod),
 * PostRunning (workspace PVC, active postRun Job) and Serving (server
 * Deployment and Service, key Secret, agent ServiceAccount), a
 * SympoziumSchedule with its last run, a PersonaPack with its stamped
 * instance (and its memory children) and schedule, a PersonaPack with
 * shared memory (its PVC, Deployment and Service), and the SympoziumConfig
 * sympozium-system/default with its GatewayClass, programmed Gateway and
 * the Serving run's HTTPRoute (the Gateway API CRDs of tests/fixtures).
 * kubesim runs only its gc and Deployment loops, so the Jobs and pods stay
 * exactly as made.  Then (1) a
 * --shadow sympoziumd, once every key was reconciled without error, must list
 * no pending write, and (2) a normal sympoziumd must send no write at all
 * (upstream's next reconcile re-sends only equal values), so no create of an
 * existing child, no AlreadyExists, no delete; every child is still there and
 * every run still in its phase.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonx.h"
#include "common/kapi.h"
#include "common/xmalloc.h"
#include "tests/lib/ksim.h"
#include "tests/lib/optest.h"
#include "tests/lib/sdproc.h"
#include "tests/lib/testutil.h"

#define WAIT_MS 60000
#define UA      "sympoziumd"
#define NS      "tkall"
#define API     "sympozium.ai/v1alpha1"

static const struct kapi_res R_NS = { "", "v1", "namespaces", false };
static const struct kapi_res R_CM = { "", "v1", "configmaps", true };
static const struct kapi_res R_SVC = { "", "v1", "services", true };
static const struct kapi_res R_PVC
        = { "", "v1", "persistentvolumeclaims", true };
static const struct kapi_res R_POD = { "", "v1", "pods", true };
static const struct kapi_res R_SA = { "", "v1", "serviceaccounts", true };
static const struct kapi_res R_SEC = { "", "v1", "secrets", true };
static const struct kapi_res R_DEP = { "apps", "v1", "deployments", true };
static const struct kapi_res R_JOB = { "batch", "v1", "jobs", true };
static const struct kapi_res R_SKP
        = { "sympozium.ai", "v1alpha1", "skillpacks", true };
static const struct kapi_res R_POL
        = { "sympozium.ai", "v1alpha1", "sympoziumpolicies", true };
static const struct kapi_res R_INST
        = { "sympozium.ai", "v1alpha1", "sympoziuminstances", true };
static const struct kapi_res R_RUN
        = { "sympozium.ai", "v1alpha1", "agentruns", true };
static const struct kapi_res R_SCHED
        = { "sympozium.ai", "v1alpha1", "sympoziumschedules", true };
static const struct kapi_res R_PACK
        = { "sympozium.ai", "v1alpha1", "personapacks", true };
static const struct kapi_res R_CFG
        = { "sympozium.ai", "v1alpha1", "sympoziumconfigs", true };
static const struct kapi_res R_GC
        = { "gateway.networking.k8s.io", "v1", "gatewayclasses", false };
static const struct kapi_res R_GW
        = { "gateway.networking.k8s.io", "v1", "gateways", true };
static const struct kapi_res R_ROUTE
        = { "gateway.networking.k8s.io", "v1", "httproutes", true };
static const struct kapi_res R_SB
        = { "agents.x-k8s.io", "v1alpha1", "sandboxes", true };
static const struct kapi_res R_SBC
        = { "agents.x-k8s.io", "v1alpha1", "sandboxclaims", true };

#define SYS    "sympozium-system"
#define GW_DIR "tests/fixtures/gateway-api"
#define SB_DIR "tests/integration/data/agent-sandbox-crds"

static struct optest F;
static char now_ts[32];      /* RFC 3339, when the fixtures were made */
static char run_web_uid[64]; /* the Serving run's */

/* Creates o (put) with status st (put, may be NULL) through the status
 * subresource, as upstream's Status().Update/Patch leaves it.  The
 * created object's uid into uid (may be NULL). */
static void
make_in(const char *ns, const struct kapi_res *r, json_object *o,
        json_object *st, char *uid)
{
	struct kapi_err e = KAPI_ERR_INIT;
	json_object *out = NULL, *out2 = NULL;

	if (optest_create(&F, r, ns, o, &out, &e) != KAPI_OK) {
		fail_msg("create %s %s: %s", r->plural,
		        json_object_to_json_string(o),
		        e.message != NULL ? e.message : "?");
	}
	json_object_put(o);
	if (uid != NULL) {
		snprintf(uid, 64, "%s", jx_get_str(out, "metadata.uid") ?: "");
	}
	if (st != NULL) {
		jx_set_path(out, "status", st);
		if (kapi_update_status(F.a.c, r, ns, out, &out2, &e)
		        != KAPI_OK) {
			fail_msg("status %s: %s", r->plural,
			        e.message != NULL ? e.message : "?");
		}
	}
	kapi_err_fini(&e);
	json_object_put(out2);
	json_object_put(out);
}

/* make_in() in the fixtures' namespace (none for a cluster-scoped r) */
static void
make(const struct kapi_res *r, json_object *o, json_object *st, char *uid)
{
	make_in(r->namespaced ? NS : NULL, r, o, st, uid);
}

/* controllerutil.SetControllerReference's owner reference */
static char *
owner(const char *kind, const char *name, const char *uid)
{
	return (xasprintf("\"ownerReferences\":[{\"apiVersion\":\"%s\","
	                  "\"kind\":\"%s\",\"name\":\"%s\",\"uid\":\"%s\","
	                  "\"controller\":true,\"blockOwnerDeletion\":true}]",
	        strcmp(kind, "Job") == 0 ? "batch/v1" : API, kind, name, uid));
}

/* skillpack_controller.go Reconcile (finalizer, status Ready, name,
 * skill count) and reconcileConfigMap (the ConfigMap named as the pack,
 * its two labels, "<skill>.md" keys, with the "# name\n\n> description"
 * header when there is a description): pack name with the one skill
 * skill (description desc, may be "", content body); sidecar is "" or
 * ",\"sidecar\":{...}". */
static void
make_skillpack(const char *name, const char *skill, const char *desc,
        const char *body, const char *sidecar)
{
	char uid[64];
	char *own, *md, *key = xasprintf("%s.md", skill);
	json_object *data = json_object_new_object(), *cm;

	make(&R_SKP,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"SkillPack\",\"metadata\":{\"name\":\"%s\","
	                       "\"finalizers\":[\"sympozium.ai/"
	                       "skillpack-finalizer\"]},\"spec\":{\"skills\":["
	                       "{\"name\":\"%s\",\"description\":\"%s\","
	                       "\"content\":\"%s\"}]%s}}",
	                name, skill, desc, body, sidecar),
	        testutil_jsonf("{\"phase\":\"Ready\",\"configMapName\":"
	                       "\"%s\",\"skillCount\":1}",
	                name),
	        uid);
	own = owner("SkillPack", name, uid);
	md = *desc != '\0' ? xasprintf("# %s\n\n> %s\n\n%s", skill, desc, body)
	                   : xstrdup(body);
	cm = testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                    "\"metadata\":{\"name\":\"%s\",\"labels\":{"
	                    "\"sympozium.ai/component\":\"skillpack\","
	                    "\"sympozium.ai/skillpack\":\"%s\"},%s}}",
	        name, name, own);
	free(own);
	json_object_object_add(data, key, json_object_new_string(md));
	json_object_object_add(cm, "data", data);
	free(key);
	free(md);
	make(&R_CM, cm, NULL, NULL);
}

static void
fixture_skillpacks(void)
{
	make_skillpack("tools", "grep", "Search", "Use grep.", "");
	/* a server skill (SkillSidecar.RequiresServer, one port) for the
	 * Serving run below */
	make_skillpack("web-endpoint", "web", "", "Serve.",
	        ",\"sidecar\":{\"image\":\"web-proxy:1\","
	        "\"requiresServer\":true,\"ports\":[{\"name\":\"http\","
	        "\"containerPort\":8080}]}");
}

/* sympoziumpolicy_controller.go Reconcile: status.boundInstances is the
 * number of instances whose spec.policyRef names it (one: "inst"). */
static void
fixture_policy(void)
{
	make(&R_POL,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"SympoziumPolicy\",\"metadata\":{\"name\":"
	                       "\"pol\"},\"spec\":{\"toolGating\":{"
	                       "\"defaultAction\":\"allow\"}}}"),
	        testutil_jsonf("{\"boundInstances\":1}"), NULL);
}

/* The memory labels upstream puts on the memory Deployment, its pods and
 * Service (sympoziuminstance_controller.go reconcileMemoryDeployment),
 * the instance's name their one argument. */
#define MEM_LABELS                                                            \
	"{\"sympozium.ai/component\":\"memory\","                             \
	"\"sympozium.ai/instance\":\"%1$s\"}"

/* sympoziuminstance_controller.go reconcileMemoryDeployment: the
 * Deployment "<inst>-memory" (Recreate, one replica, container
 * memory-server of <registry>/skill-memory:<tag>, defaults
 * ghcr.io/sympozium-ai/sympozium and latest, port http 8080, the two
 * env vars, the memory-db PVC at /data, fsGroup 1000) and its Service,
 * of instance in. */
static void
make_memory_server(const char *in, const char *own)
{
	make(&R_DEP,
	        testutil_jsonf(
	                "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	                "\"metadata\":{\"name\":\"%1$s-memory\",\"labels\":"
	                "" MEM_LABELS ",%2$s},\"spec\":{\"replicas\":1,"
	                "\"strategy\":{\"type\":\"Recreate\"},\"selector\":{"
	                "\"matchLabels\":" MEM_LABELS "},\"template\":{"
	                "\"metadata\":{\"labels\":" MEM_LABELS "},\"spec\":{"
	                "\"securityContext\":{\"fsGroup\":1000},"
	                "\"containers\":[{\"name\":\"memory-server\","
	                "\"image\":\"ghcr.io/sympozium-ai/sympozium/"
	                "skill-memory:latest\",\"imagePullPolicy\":"
	                "\"IfNotPresent\",\"ports\":[{\"name\":\"http\","
	                "\"containerPort\":8080,\"protocol\":\"TCP\"}],"
	                "\"env\":[{\"name\":\"MEMORY_DB_PATH\",\"value\":"
	                "\"/data/memory.db\"},{\"name\":\"MEMORY_PORT\","
	                "\"value\":\"8080\"}],\"volumeMounts\":[{\"name\":"
	                "\"memory-db\",\"mountPath\":\"/data\"}]}],"
	                "\"volumes\":[{\"name\":\"memory-db\","
	                "\"persistentVolumeClaim\":{\"claimName\":"
	                "\"%1$s-memory-db\"}}]}}}}",
	                in, own),
	        NULL, NULL);
	make(&R_SVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
	                       "\"metadata\":{\"name\":\"%1$s-memory\","
	                       "\"labels\":" MEM_LABELS ",%2$s},\"spec\":{"
	                       "\"selector\":" MEM_LABELS ",\"ports\":[{"
	                       "\"name\":\"http\",\"port\":8080,"
	                       "\"targetPort\":8080,\"protocol\":\"TCP\"}]}}",
	                in, own),
	        NULL, NULL);
}

/* sympoziuminstance_controller.go reconcileMemoryConfigMap
 * ("<inst>-memory", labels instance and component memory, MEMORY.md's
 * initial text), reconcileMemoryPVC ("<inst>-memory-db", component
 * memory-db, RWO 1Gi) and reconcileMemoryDeployment (the "memory"
 * SkillPack ref): instance in's memory children. */
static void
make_memory_children(const char *in, const char *own)
{
	make(&R_CM,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                       "\"metadata\":{\"name\":\"%1$s-memory\","
	                       "\"labels\":{\"sympozium.ai/instance\":"
	                       "\"%1$s\",\"sympozium.ai/component\":"
	                       "\"memory\"},%2$s},\"data\":{\"MEMORY.md\":"
	                       "\"# Agent Memory\\n\\nNo memories recorded "
	                       "yet.\\n\"}}",
	                in, own),
	        NULL, NULL);
	make(&R_PVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":"
	                       "\"PersistentVolumeClaim\",\"metadata\":{"
	                       "\"name\":\"%1$s-memory-db\",\"labels\":{"
	                       "\"sympozium.ai/instance\":\"%1$s\","
	                       "\"sympozium.ai/component\":\"memory-db\"},"
	                       "%2$s},\"spec\":{\"accessModes\":["
	                       "\"ReadWriteOnce\"],\"resources\":{"
	                       "\"requests\":{\"storage\":\"1Gi\"}}}}",
	                in, own),
	        NULL, NULL);
	make_memory_server(in, own);
}

/* The labels of a channel Deployment and its pods
 * (sympoziuminstance_controller.go buildChannelDeployment) */
#define CHAN_LABELS                                                           \
	"{\"sympozium.ai/component\":\"channel\",\"sympozium.ai/channel\":"   \
	"\"slack\",\"sympozium.ai/instance\":\"inst\"}"
/* the same for the whatsapp channel (and its PVC, ensureWhatsAppPVC) */
#define WA_LABELS                                                             \
	"{\"sympozium.ai/component\":\"channel\",\"sympozium.ai/channel\":"   \
	"\"whatsapp\",\"sympozium.ai/instance\":\"inst\"}"

/* sympoziuminstance_controller.go ensureWhatsAppPVC ("<deploy>-data",
 * RWO 256Mi) and buildChannelDeployment for whatsapp without a config
 * Secret (no envFrom; Recreate, the PVC at /data as whatsapp-data). */
static void
fixture_whatsapp(const char *own)
{
	make(&R_PVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":"
	                       "\"PersistentVolumeClaim\",\"metadata\":{"
	                       "\"name\":\"inst-channel-whatsapp-data\","
	                       "\"labels\":" WA_LABELS ",%s},\"spec\":{"
	                       "\"accessModes\":[\"ReadWriteOnce\"],"
	                       "\"resources\":{\"requests\":{\"storage\":"
	                       "\"256Mi\"}}}}",
	                own),
	        NULL, NULL);
	make(&R_DEP,
	        testutil_jsonf(
	                "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	                "\"metadata\":{\"name\":\"inst-channel-whatsapp\","
	                "\"labels\":" WA_LABELS ",%s},\"spec\":{"
	                "\"replicas\":1,\"strategy\":{\"type\":"
	                "\"Recreate\"},\"selector\":{\"matchLabels\":"
	                "" WA_LABELS "},\"template\":{\"metadata\":{"
	                "\"labels\":" WA_LABELS "},\"spec\":{"
	                "\"containers\":[{\"name\":\"channel\",\"image\":"
	                "\"ghcr.io/sympozium-ai/sympozium/channel-whatsapp:"
	                "latest\",\"imagePullPolicy\":\"IfNotPresent\","
	                "\"env\":[{\"name\":\"INSTANCE_NAME\",\"value\":"
	                "\"inst\"},{\"name\":\"EVENT_BUS_URL\",\"value\":"
	                "\"nats://nats.sympozium-system.svc:4222\"},{"
	                "\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\"},{\"name\":"
	                "\"OTEL_EXPORTER_OTLP_PROTOCOL\",\"value\":\"grpc\"},"
	                "{\"name\":\"OTEL_SERVICE_NAME\",\"value\":"
	                "\"sympozium-channel-whatsapp\"}],\"volumeMounts\":[{"
	                "\"name\":\"whatsapp-data\",\"mountPath\":"
	                "\"/data\"}]}],\"volumes\":[{\"name\":"
	                "\"whatsapp-data\",\"persistentVolumeClaim\":{"
	                "\"claimName\":\"inst-channel-whatsapp-data\"}}]}}}}",
	                own),
	        NULL, NULL);
}

/* sympoziuminstance_controller.go reconcileChannels and
 * buildChannelDeployment: "<inst>-channel-<type>", one replica,
 * container channel of <registry>/channel-<type>:<tag>, the five env
 * vars (the OTLP endpoint empty: no observability, no env), envFrom the
 * channel's config Secret (the user's, which exists). */
static void
fixture_channel(const char *own)
{
	make(&R_SEC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
	                       "\"metadata\":{\"name\":\"slack-cfg\"},"
	                       "\"stringData\":{\"SLACK_BOT_TOKEN\":\"x\"}}"),
	        NULL, NULL);
	make(&R_DEP,
	        testutil_jsonf(
	                "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	                "\"metadata\":{\"name\":\"inst-channel-slack\","
	                "\"labels\":" CHAN_LABELS ",%s},\"spec\":{"
	                "\"replicas\":1,\"selector\":{\"matchLabels\":"
	                "" CHAN_LABELS "},\"template\":{\"metadata\":{"
	                "\"labels\":" CHAN_LABELS "},\"spec\":{"
	                "\"containers\":[{\"name\":\"channel\",\"image\":"
	                "\"ghcr.io/sympozium-ai/sympozium/channel-slack:"
	                "latest\",\"imagePullPolicy\":\"IfNotPresent\","
	                "\"env\":[{\"name\":\"INSTANCE_NAME\",\"value\":"
	                "\"inst\"},{\"name\":\"EVENT_BUS_URL\",\"value\":"
	                "\"nats://nats.sympozium-system.svc:4222\"},{"
	                "\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\"},{\"name\":"
	                "\"OTEL_EXPORTER_OTLP_PROTOCOL\",\"value\":\"grpc\"},"
	                "{\"name\":\"OTEL_SERVICE_NAME\",\"value\":"
	                "\"sympozium-channel-slack\"}],\"envFrom\":[{"
	                "\"secretRef\":{\"name\":\"slack-cfg\"}}]}]}}}}",
	                own),
	        NULL, NULL);
}

/* sympoziuminstance_controller.go Reconcile (finalizer
 * sympozium.ai/finalizer; countActiveAgentPods: phase Serving as run-web
 * serves, activeAgentPods 4, run-live, run-sb, run-wp and run-web;
 * reconcileChannels: the slack channel Connected, its Deployment having a
 * ready replica) with its channel Deployment and its memory children
 * (spec.memory and the "memory" skill). */
static void
fixture_instance(void)
{
	char uid[64];
	char *own;

	make(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"SympoziumInstance\",\"metadata\":{\"name\":"
	                       "\"inst\",\"finalizers\":[\"sympozium.ai/"
	                       "finalizer\"]},\"spec\":{\"agents\":{"
	                       "\"default\":{\"model\":\"gpt-4o\"}},"
	                       "\"policyRef\":\"pol\",\"skills\":[{"
	                       "\"skillPackRef\":\"memory\"}],\"memory\":{"
	                       "\"enabled\":true},\"channels\":[{\"type\":"
	                       "\"slack\",\"configRef\":{\"secret\":"
	                       "\"slack-cfg\"}},{\"type\":\"whatsapp\"}]}}"),
	        testutil_jsonf("{\"phase\":\"Serving\",\"activeAgentPods\":4,"
	                       "\"channels\":[{\"type\":\"slack\","
	                       "\"status\":\"Connected\"},{\"type\":"
	                       "\"whatsapp\",\"status\":\"Connected\"}]}"),
	        uid);
	own = owner("SympoziumInstance", "inst", uid);
	make_memory_children("inst", own);
	fixture_channel(own);
	fixture_whatsapp(own);
	free(own);
}

/* agentrun_controller.go buildJob (component agent-run) and
 * buildPostRunJob (component post-run): the labels of the Job and its
 * pods, run name then component */
#define RUN_LABELS_FMT                                                        \
	"{\"sympozium.ai/agent-run\":\"%s\",\"sympozium.ai/instance\":"       \
	"\"inst\",\"sympozium.ai/component\":\"%s\","                         \
	"\"app.kubernetes.io/part-of\":\"sympozium\","                        \
	"\"app.kubernetes.io/managed-by\":\"sympozium-controller\"}"

/* An AgentRun of instance inst (the instance label is the one
 * countActiveAgentPods and pruneOldRuns select on), more (",..." or "")
 * added to its spec, its status st. */
static void
make_run(const char *name, bool finalizer, const char *more, json_object *st,
        char *uid)
{
	make(&R_RUN,
	        testutil_jsonf(
	                "{\"apiVersion\":\"" API "\",\"kind\":"
	                "\"AgentRun\",\"metadata\":{\"name\":\"%s\","
	                "\"labels\":{\"sympozium.ai/instance\":"
	                "\"inst\"}%s},\"spec\":{\"instanceRef\":"
	                "\"inst\",\"agentId\":\"default\","
	                "\"sessionKey\":\"s-%s\",\"task\":\"hello\","
	                "\"model\":{\"provider\":\"openai\",\"model\":"
	                "\"gpt-4o\",\"authSecretRef\":\"openai-key\"}%s}}",
	                name,
	                finalizer ? ",\"finalizers\":[\"sympozium.ai/"
	                            "agentrun-finalizer\"]"
	                          : "",
	                name, more),
	        st, uid);
}

/* agentrun_controller.go createInputConfigMap ("<run>-input", label
 * agent-run, the four keys) and buildJob (the Job named as the run,
 * RUN_LABELS, ttl 300, deadline 600, backoffLimit 0, restartPolicy
 * Never, service account sympozium-agent), jst its status; the Job's pod
 * as the Job controller names and labels it, pst its status. */
static void
make_job(const char *job, const char *run, const char *own, const char *comp,
        const char *container, json_object *jst, json_object *pst)
{
	char juid[64];
	char *jown;

	make(&R_JOB,
	        testutil_jsonf(
	                "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	                "\"metadata\":{\"name\":\"%s\",\"labels\":"
	                "" RUN_LABELS_FMT ",%s},\"spec\":{"
	                "\"ttlSecondsAfterFinished\":300,"
	                "\"activeDeadlineSeconds\":600,\"backoffLimit\":"
	                "0,\"template\":{\"metadata\":{\"labels\":"
	                "" RUN_LABELS_FMT "},\"spec\":{\"restartPolicy\":"
	                "\"Never\",\"serviceAccountName\":"
	                "\"sympozium-agent\",\"containers\":[{\"name\":"
	                "\"%s\",\"image\":\"ghcr.io/sympozium-ai/"
	                "sympozium/agent-runner:latest\"}]}}}}",
	                job, run, comp, own, run, comp, container),
	        jst, juid);
	jown = owner("Job", job, juid);
	make(&R_POD,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	                       "\"metadata\":{\"name\":\"%s-p0d\",\"labels\":"
	                       "" RUN_LABELS_FMT ",%s},\"spec\":{"
	                       "\"restartPolicy\":\"Never\",\"containers\":[{"
	                       "\"name\":\"%s\",\"image\":\"ghcr.io/"
	                       "sympozium-ai/sympozium/agent-runner:"
	                       "latest\"}]}}",
	                job, run, comp, jown, container),
	        pst, NULL);
	free(jown);
}

static void
make_run_children(
        const char *run, const char *uid, json_object *jst, json_object *pst)
{
	char *own = owner("AgentRun", run, uid);

	make(&R_CM,
	        testutil_jsonf(
	                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	                "\"metadata\":{\"name\":\"%s-input\",\"labels\":"
	                "{\"sympozium.ai/agent-run\":\"%s\"},%s},"
	                "\"data\":{\"task\":\"hello\",\"system-prompt\":"
	                "\"\",\"agent-id\":\"default\",\"session-key\":"
	                "\"s-%s\"}}",
	                run, run, own, run),
	        NULL, NULL);
	make_job(run, run, own, "agent-run", "agent", jst, pst);
	free(own);
}

/* A Job's status: complete (succeeded) or active */
static json_object *
job_status(bool done)
{
	return (done ? testutil_jsonf("{\"succeeded\":1,\"startTime\":\"%s\","
	                              "\"completionTime\":\"%s\","
	                              "\"conditions\":[{\"type\":\"Complete\","
	                              "\"status\":\"True\"}]}",
	                now_ts, now_ts)
	             : testutil_jsonf(
	                     "{\"active\":1,\"startTime\":\"%s\"}", now_ts));
}

/* A pod's status: container c terminated with 0, or running */
static json_object *
pod_status(const char *c, bool done)
{
	return (done ? testutil_jsonf(
	                "{\"phase\":\"Succeeded\",\"containerStatuses\":"
	                "[{\"name\":\"%s\",\"ready\":false,"
	                "\"restartCount\":0,\"image\":\"x\","
	                "\"imageID\":\"\",\"state\":{\"terminated\":{"
	                "\"exitCode\":0,\"reason\":\"Completed\"}}}]}",
	                c)
	             : testutil_jsonf(
	                     "{\"phase\":\"Running\",\"containerStatuses\":"
	                     "[{\"name\":\"%s\",\"ready\":true,"
	                     "\"restartCount\":0,\"image\":\"x\","
	                     "\"imageID\":\"\",\"state\":{\"running\":{"
	                     "\"startedAt\":\"%s\"}}}]}",
	                     c, now_ts));
}

/* agentrun_controller.go: a run succeedRun finished (phase Succeeded,
 * completedAt, result; jobName and startedAt from reconcilePending,
 * podName from reconcileRunning) whose finalizer reconcileCompleted
 * removed; its Job complete, its pod terminated with 0. */
static void
fixture_run_succeeded(void)
{
	char uid[64];

	make_run("run-done", false, "",
	        testutil_jsonf("{\"phase\":\"Succeeded\",\"jobName\":"
	                       "\"run-done\",\"podName\":\"run-done-p0d\","
	                       "\"startedAt\":\"%s\",\"completedAt\":\"%s\","
	                       "\"result\":\"hi\"}",
	                now_ts, now_ts),
	        uid);
	make_run_children(
	        "run-done", uid, job_status(true), pod_status("agent", true));
}

/* agentrun_controller.go reconcileRunning's Job failure without a
 * result in the log and failRun (phase Failed, completedAt, error "Job
 * failed"), then reconcileCompleted (finalizer removed; three completed
 * runs of inst, under DefaultRunHistoryLimit 50, so none pruned): its
 * Job failed, its pod failed with exit code 1. */
static void
fixture_run_failed(void)
{
	char uid[64];

	make_run("run-fail", false, "",
	        testutil_jsonf("{\"phase\":\"Failed\",\"jobName\":"
	                       "\"run-fail\",\"podName\":\"run-fail-p0d\","
	                       "\"startedAt\":\"%s\",\"completedAt\":\"%s\","
	                       "\"error\":\"Job failed\"}",
	                now_ts, now_ts),
	        uid);
	make_run_children("run-fail", uid,
	        testutil_jsonf("{\"failed\":1,\"startTime\":\"%s\","
	                       "\"conditions\":[{\"type\":\"Failed\","
	                       "\"status\":\"True\",\"reason\":"
	                       "\"BackoffLimitExceeded\"}]}",
	                now_ts),
	        testutil_jsonf("{\"phase\":\"Failed\",\"containerStatuses\":[{"
	                       "\"name\":\"agent\",\"ready\":false,"
	                       "\"restartCount\":0,\"image\":\"x\","
	                       "\"imageID\":\"\",\"state\":{\"terminated\":{"
	                       "\"exitCode\":1,\"reason\":\"Error\"}}}]}"));
}

/* agentrun_controller.go reconcilePending (finalizer, phase Running,
 * jobName, startedAt) and reconcileRunning (podName): a run within its
 * timeout whose Job is active and whose agent container runs, which
 * reconcileRunning only requeues. */
static void
fixture_run_running(void)
{
	char uid[64];

	make_run("run-live", true, "",
	        testutil_jsonf("{\"phase\":\"Running\",\"jobName\":"
	                       "\"run-live\",\"podName\":\"run-live-p0d\","
	                       "\"startedAt\":\"%s\"}",
	                now_ts),
	        uid);
	make_run_children("run-live", uid, job_status(false),
	        pod_status("agent", false));
}

/* agentrun_sandbox.go buildSandboxCR: the labels of a Sandbox, its pod
 * template and so its pod (run %1$s) */
#define SB_LABELS_FMT                                                         \
	"{\"sympozium.ai/agent-run\":\"%1$s\",\"sympozium.ai/instance\":"     \
	"\"inst\",\"sympozium.ai/component\":\"agent-run\","                  \
	"\"sympozium.ai/agent-sandbox\":\"true\","                            \
	"\"app.kubernetes.io/part-of\":\"sympozium\","                        \
	"\"app.kubernetes.io/managed-by\":\"sympozium-controller\"}"

/* agentrun_sandbox.go reconcilePendingAgentSandbox (phase Running,
 * startedAt, sandboxName from buildSandboxCR's "sb-<run>": labels, the
 * run's controller reference, podTemplate with sympozium-agent, Never,
 * runAsNonRoot, uid and fsGroup 1000; its container list abbreviated to
 * the agent, which a Running pass does not read), then
 * reconcileRunningAgentSandbox (podName = the Sandbox's name; Ready
 * condition False while the pod starts, pod Running: requeue only); the
 * pod as the agent-sandbox controller makes it from the template. */
static void
fixture_run_sandbox(void)
{
	char uid[64];
	char *own;

	make_run("run-sb", true, ",\"agentSandbox\":{\"enabled\":true}",
	        testutil_jsonf("{\"phase\":\"Running\",\"sandboxName\":"
	                       "\"sb-run-sb\",\"podName\":\"sb-run-sb\","
	                       "\"startedAt\":\"%s\"}",
	                now_ts),
	        uid);
	own = owner("AgentRun", "run-sb", uid);
	make(&R_SB,
	        testutil_jsonf("{\"apiVersion\":\"agents.x-k8s.io/v1alpha1\","
	                       "\"kind\":\"Sandbox\",\"metadata\":{\"name\":"
	                       "\"sb-run-sb\",\"labels\":" SB_LABELS_FMT
	                       ",%2$s},\"spec\":{\"podTemplate\":{"
	                       "\"metadata\":{\"labels\":" SB_LABELS_FMT
	                       "},\"spec\":{\"serviceAccountName\":"
	                       "\"sympozium-agent\",\"restartPolicy\":"
	                       "\"Never\",\"securityContext\":{"
	                       "\"runAsNonRoot\":true,\"runAsUser\":1000,"
	                       "\"fsGroup\":1000},\"containers\":[{\"name\":"
	                       "\"agent\",\"image\":\"ghcr.io/sympozium-ai/"
	                       "sympozium/agent-runner:latest\"}]}}}}",
	                "run-sb", own),
	        testutil_jsonf("{\"conditions\":[{\"type\":\"Ready\","
	                       "\"status\":\"False\",\"reason\":"
	                       "\"PodNotReady\",\"message\":\"\"}]}"),
	        NULL);
	make(&R_POD,
	        testutil_jsonf(
	                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	                "\"metadata\":{\"name\":\"sb-run-sb\","
	                "\"labels\":" SB_LABELS_FMT "},\"spec\":{"
	                "\"serviceAccountName\":\"sympozium-agent\","
	                "\"restartPolicy\":\"Never\",\"containers\":[{"
	                "\"name\":\"agent\",\"image\":\"ghcr.io/"
	                "sympozium-ai/sympozium/agent-runner:latest\"}]}}",
	                "run-sb"),
	        pod_status("agent", false), NULL);
	free(own);
}

/* agentrun_sandbox.go reconcilePendingAgentSandbox of a warm-pool run
 * (buildSandboxClaimCR's "sbc-<run>": the Sandbox labels, the run's
 * controller reference, spec.warmPoolRef; status sandboxClaimName and
 * sandboxName both the claim's name, as the created object's), then
 * reconcileRunningAgentSandbox (podName the same; the Sandbox the
 * agent-sandbox controller bound to the claim, of the claim's name and
 * owned by it, Ready, its pod Running: requeue only). */
static void
fixture_run_warm_pool(void)
{
	char uid[64], cuid[64];
	char *own, *cown;

	make_run("run-wp", true,
	        ",\"agentSandbox\":{\"enabled\":true,\"warmPoolRef\":"
	        "\"pool\"}",
	        testutil_jsonf("{\"phase\":\"Running\",\"sandboxClaimName\":"
	                       "\"sbc-run-wp\",\"sandboxName\":\"sbc-run-wp\","
	                       "\"podName\":\"sbc-run-wp\",\"startedAt\":"
	                       "\"%s\"}",
	                now_ts),
	        uid);
	own = owner("AgentRun", "run-wp", uid);
	make(&R_SBC,
	        testutil_jsonf("{\"apiVersion\":\"agents.x-k8s.io/v1alpha1\","
	                       "\"kind\":\"SandboxClaim\",\"metadata\":{"
	                       "\"name\":\"sbc-run-wp\",\"labels\":"
	                       "" SB_LABELS_FMT ",%2$s},\"spec\":{"
	                       "\"warmPoolRef\":{\"name\":\"pool\"}}}",
	                "run-wp", own),
	        NULL, cuid);
	cown = xasprintf("\"ownerReferences\":[{\"apiVersion\":"
	                 "\"agents.x-k8s.io/v1alpha1\",\"kind\":"
	                 "\"SandboxClaim\",\"name\":\"sbc-run-wp\","
	                 "\"uid\":\"%s\",\"controller\":true}]",
	        cuid);
	make(&R_SB,
	        testutil_jsonf("{\"apiVersion\":\"agents.x-k8s.io/v1alpha1\","
	                       "\"kind\":\"Sandbox\",\"metadata\":{\"name\":"
	                       "\"sbc-run-wp\",%s},\"spec\":{\"podTemplate\":"
	                       "{\"spec\":{\"containers\":[{\"name\":"
	                       "\"agent\",\"image\":\"ghcr.io/sympozium-ai/"
	                       "sympozium/agent-runner:latest\"}]}}}}",
	                cown),
	        testutil_jsonf("{\"conditions\":[{\"type\":\"Ready\","
	                       "\"status\":\"True\",\"reason\":"
	                       "\"PodReady\",\"message\":\"\"}]}"),
	        NULL);
	make(&R_POD,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	                       "\"metadata\":{\"name\":\"sbc-run-wp\"},"
	                       "\"spec\":{\"restartPolicy\":\"Never\","
	                       "\"containers\":[{\"name\":\"agent\","
	                       "\"image\":\"ghcr.io/sympozium-ai/sympozium/"
	                       "agent-runner:latest\"}]}}"),
	        pod_status("agent", false), NULL);
	free(cown);
	free(own);
}

/* agentrun_controller.go reconcilePending (ensureWorkspacePVC:
 * "<run>-workspace", labels agent-run and component workspace, RWO 1Gi),
 * reconcileRunning's Job success and startPostRun (exitCode, result,
 * phase PostRunning, postRunJobName "<run>-postrun" from
 * buildPostRunJob, component post-run): the postRun Job still active,
 * within its 10 minutes, so reconcilePostRunning only requeues. */
static void
fixture_run_postrunning(void)
{
	char uid[64];
	char *own;

	make_run("run-post", true,
	        ",\"lifecycle\":{\"postRun\":[{\"name\":\"notify\","
	        "\"image\":\"notify:1\"}]}",
	        testutil_jsonf("{\"phase\":\"PostRunning\",\"jobName\":"
	                       "\"run-post\",\"podName\":\"run-post-p0d\","
	                       "\"startedAt\":\"%s\",\"exitCode\":0,"
	                       "\"result\":\"done\",\"postRunJobName\":"
	                       "\"run-post-postrun\"}",
	                now_ts),
	        uid);
	make_run_children(
	        "run-post", uid, job_status(true), pod_status("agent", true));
	own = owner("AgentRun", "run-post", uid);
	make(&R_PVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":"
	                       "\"PersistentVolumeClaim\",\"metadata\":{"
	                       "\"name\":\"run-post-workspace\",\"labels\":{"
	                       "\"sympozium.ai/agent-run\":\"run-post\","
	                       "\"sympozium.ai/component\":\"workspace\"},%s},"
	                       "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
	                       "\"resources\":{\"requests\":{\"storage\":"
	                       "\"1Gi\"}}}}",
	                own),
	        NULL, NULL);
	make_job("run-post-postrun", "run-post", own, "post-run", "notify",
	        job_status(false), pod_status("notify", false));
	free(own);
}

/* agentrun_controller.go reconcilePendingServer: labels of the server
 * Deployment, its pods and Service (component agent-server) */
#define SRV_LABELS                                                            \
	"{\"sympozium.ai/agent-run\":\"run-web\",\"sympozium.ai/instance\":"  \
	"\"inst\",\"sympozium.ai/component\":\"agent-server\","               \
	"\"app.kubernetes.io/part-of\":\"sympozium\","                        \
	"\"app.kubernetes.io/managed-by\":\"sympozium-controller\"}"

/* agentrun_controller.go reconcilePendingServer: the Deployment
 * "<run>-server" (container web-proxy of the sidecar's image, env
 * INSTANCE_NAME and WEB_PROXY_API_KEY from the key Secret, the sidecar's
 * ports) and the Service of the same name. */
static void
fixture_server(const char *own)
{
	make(&R_DEP,
	        testutil_jsonf(
	                "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	                "\"metadata\":{\"name\":\"run-web-server\","
	                "\"labels\":" SRV_LABELS ",%s},\"spec\":{"
	                "\"replicas\":1,\"selector\":{\"matchLabels\":"
	                "" SRV_LABELS "},\"template\":{\"metadata\":{"
	                "\"labels\":" SRV_LABELS "},\"spec\":{"
	                "\"restartPolicy\":\"Always\",\"serviceAccountName\":"
	                "\"sympozium-agent\",\"containers\":[{\"name\":"
	                "\"web-proxy\",\"image\":\"web-proxy:1\","
	                "\"imagePullPolicy\":\"IfNotPresent\",\"env\":[{"
	                "\"name\":\"INSTANCE_NAME\",\"value\":\"inst\"},{"
	                "\"name\":\"WEB_PROXY_API_KEY\",\"valueFrom\":{"
	                "\"secretKeyRef\":{\"name\":\"inst-web-proxy-key\","
	                "\"key\":\"api-key\"}}}],\"ports\":[{\"name\":"
	                "\"http\",\"containerPort\":8080,\"protocol\":"
	                "\"TCP\"}]}]}}}}",
	                own),
	        NULL, NULL);
	make(&R_SVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
	                       "\"metadata\":{\"name\":\"run-web-server\","
	                       "\"labels\":" SRV_LABELS ",%s},\"spec\":{"
	                       "\"selector\":" SRV_LABELS ",\"ports\":[{"
	                       "\"name\":\"http\",\"port\":8080,"
	                       "\"targetPort\":8080,\"protocol\":\"TCP\"}]}}",
	                own),
	        NULL, NULL);
}

/* agentrun_controller.go reconcilePendingServer: a server-mode run
 * (spec.mode server, the web-endpoint skill whose sidecar requires a
 * server) Serving (deploymentName, serviceName, startedAt), with
 * ensureAgentServiceAccount's sympozium-agent (label managed-by
 * sympozium, no owner), ensureServerAPIKeySecret's
 * "<instance>-web-proxy-key" (labels component web-proxy and instance)
 * and the server; reconcileServing checks the Deployment and retries
 * the HTTPRoute (fixture_gateway). */
static void
fixture_run_serving(void)
{
	char uid[64];
	char *own;

	make(&R_SA,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":"
	                       "\"ServiceAccount\",\"metadata\":{\"name\":"
	                       "\"sympozium-agent\",\"labels\":{"
	                       "\"app.kubernetes.io/managed-by\":"
	                       "\"sympozium\"}}}"),
	        NULL, NULL);
	make_run("run-web", true,
	        ",\"mode\":\"server\",\"skills\":[{\"skillPackRef\":"
	        "\"web-endpoint\"}]",
	        testutil_jsonf("{\"phase\":\"Serving\",\"deploymentName\":"
	                       "\"run-web-server\",\"serviceName\":"
	                       "\"run-web-server\",\"startedAt\":\"%s\"}",
	                now_ts),
	        uid);
	snprintf(run_web_uid, sizeof(run_web_uid), "%s", uid);
	own = owner("AgentRun", "run-web", uid);
	make(&R_SEC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
	                       "\"metadata\":{\"name\":\"inst-web-proxy-key\","
	                       "\"labels\":{\"sympozium.ai/component\":"
	                       "\"web-proxy\",\"sympozium.ai/instance\":"
	                       "\"inst\"},%s},\"stringData\":{\"api-key\":"
	                       "\"sk-00\"}}",
	                own),
	        NULL, NULL);
	fixture_server(own);
	free(own);
}

/* The fixtures' cron: midnight UTC on the 1st of the month six months
 * from now, so no run falls due during the test, whether counted from
 * the last run or (no run yet) from a day before creation
 * (sympoziumschedule_controller.go Reconcile); its next time into next.
 * Upstream's cron parser works in the controller's local time: UTC in
 * its image. */
static char cron_expr[32], next_ts[32];

static void
make_cron(const struct tm *now)
{
	int month = (now->tm_mon + 6) % 12 + 1;
	int year = now->tm_year + 1900 + (month <= now->tm_mon + 1 ? 1 : 0);

	snprintf(cron_expr, sizeof(cron_expr), "0 0 1 %d *", month);
	snprintf(next_ts, sizeof(next_ts), "%04d-%02d-01T00:00:00Z", year,
	        month);
}

/* A schedule (finalizer sympozium.ai/schedule-finalizer) of instance in,
 * meta (",..." or "") added to its metadata, status st. */
static void
make_schedule(const char *name, const char *in, const char *task,
        const char *meta, json_object *st, char *uid)
{
	make(&R_SCHED,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"SympoziumSchedule\",\"metadata\":{\"name\":"
	                       "\"%s\",\"finalizers\":[\"sympozium.ai/"
	                       "schedule-finalizer\"]%s},\"spec\":{"
	                       "\"instanceRef\":\"%s\",\"schedule\":\"%s\","
	                       "\"task\":\"%s\",\"type\":\"scheduled\","
	                       "\"concurrencyPolicy\":\"Forbid\","
	                       "\"includeMemory\":true}}",
	                name, meta, in, cron_expr, task),
	        st, uid);
}

/* sympoziumschedule_controller.go Reconcile, the pass that created run
 * sched-3 (lastRunTime, lastRunName, totalRuns, nextRunTime the next
 * time after it, phase Active) and the run it made: labels instance,
 * schedule and type, controlled by the schedule, agentId
 * "schedule-<name>", sessionKey empty (not set; the field has no
 * omitempty), the task behind the instance's memory
 * ("## Memory Context\n...\n\n## Task\n..."), the instance's skills,
 * Succeeded (its Job's 300 s TTL passed, gc took the Job and pod). */
static void
fixture_schedule(void)
{
	char uid[64];
	char *own;

	make_schedule("sched", "inst", "report", "",
	        testutil_jsonf("{\"phase\":\"Active\",\"lastRunTime\":\"%s\","
	                       "\"lastRunName\":\"sched-3\",\"totalRuns\":3,"
	                       "\"nextRunTime\":\"%s\"}",
	                now_ts, next_ts),
	        uid);
	own = owner("SympoziumSchedule", "sched", uid);
	make(&R_RUN,
	        testutil_jsonf(
	                "{\"apiVersion\":\"" API "\",\"kind\":"
	                "\"AgentRun\",\"metadata\":{\"name\":"
	                "\"sched-3\",\"labels\":{\"sympozium.ai/"
	                "instance\":\"inst\",\"sympozium.ai/schedule\":"
	                "\"sched\",\"sympozium.ai/type\":\"scheduled\"},"
	                "%s},\"spec\":{\"instanceRef\":\"inst\","
	                "\"agentId\":\"schedule-sched\",\"sessionKey\":"
	                "\"\",\"task\":"
	                "\"## Memory Context\\n# Agent Memory\\n\\nNo "
	                "memories recorded yet.\\n\\n\\n## Task\\n"
	                "report\",\"model\":{\"provider\":\"openai\","
	                "\"model\":\"gpt-4o\",\"authSecretRef\":\"\"},"
	                "\"skills\":[{\"skillPackRef\":\"memory\"}]}}",
	                own),
	        testutil_jsonf("{\"phase\":\"Succeeded\",\"jobName\":"
	                       "\"sched-3\",\"podName\":\"sched-3-p0d\","
	                       "\"startedAt\":\"%s\",\"completedAt\":\"%s\","
	                       "\"result\":\"ok\"}",
	                now_ts, now_ts),
	        NULL);
	free(own);
}

/* personapack_controller.go defaultObservabilitySpec with no
 * SYMPOZIUM_DEFAULT_OTEL_* set */
#define DEFAULT_OBS                                                           \
	"{\"enabled\":false,\"otlpEndpoint\":\"sympozium-otel-collector."     \
	"sympozium-system.svc:4317\",\"otlpProtocol\":\"grpc\","              \
	"\"serviceName\":\"sympozium\",\"resourceAttributes\":{"              \
	"\"deployment.environment\":\"cluster\",\"k8s.cluster.name\":"        \
	"\"unknown\"}}"

/* personapack_controller.go Reconcile (finalizer
 * sympozium.ai/personapack-finalizer, status Ready with the counts and
 * installedPersonas), reconcilePersona with buildInstance (instance
 * "<pack>-<persona>", labels persona-pack and persona, controlled by the
 * pack, default model gpt-4o, memory enabled 256 KB with the persona's
 * prompt, the default observability, the "memory" skill added) and
 * buildSchedule ("<instance>-schedule", same labels, Forbid,
 * includeMemory); the stamped instance as the instance controller
 * leaves it (Running, no active run, its memory children) and the
 * stamped schedule as the schedule controller leaves it before its first
 * run (Active, nextRunTime). */
static void
fixture_personapack(void)
{
	char uid[64], iuid[64];
	char *own, *iown;

	make(&R_PACK,
	        testutil_jsonf(
	                "{\"apiVersion\":\"" API "\",\"kind\":"
	                "\"PersonaPack\",\"metadata\":{\"name\":\"team\","
	                "\"finalizers\":[\"sympozium.ai/personapack-"
	                "finalizer\"]},\"spec\":{\"enabled\":true,"
	                "\"personas\":[{\"name\":\"lead\","
	                "\"systemPrompt\":\"Lead.\",\"schedule\":{"
	                "\"type\":\"scheduled\",\"cron\":\"%s\","
	                "\"task\":\"plan\"}}]}}",
	                cron_expr),
	        testutil_jsonf("{\"phase\":\"Ready\",\"personaCount\":1,"
	                       "\"installedCount\":1,\"installedPersonas\":[{"
	                       "\"name\":\"lead\",\"instanceName\":"
	                       "\"team-lead\",\"scheduleName\":"
	                       "\"team-lead-schedule\"}]}"),
	        uid);
	own = owner("PersonaPack", "team", uid);
	make(&R_INST,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"SympoziumInstance\",\"metadata\":{\"name\":"
	                       "\"team-lead\",\"labels\":{\"sympozium.ai/"
	                       "persona-pack\":\"team\",\"sympozium.ai/"
	                       "persona\":\"lead\"},\"finalizers\":["
	                       "\"sympozium.ai/finalizer\"],%s},\"spec\":{"
	                       "\"agents\":{\"default\":{\"model\":"
	                       "\"gpt-4o\"}},\"memory\":{\"enabled\":true,"
	                       "\"maxSizeKB\":256,\"systemPrompt\":\"Lead.\"},"
	                       "\"observability\":" DEFAULT_OBS ",\"skills\":["
	                       "{\"skillPackRef\":\"memory\"}]}}",
	                own),
	        testutil_jsonf("{\"phase\":\"Running\"}"), iuid);
	iown = owner("SympoziumInstance", "team-lead", iuid);
	make_memory_children("team-lead", iown);
	free(iown);
	{
		char *meta
		        = xasprintf(",\"labels\":{\"sympozium.ai/persona-pack"
		                    "\":\"team\",\"sympozium.ai/persona\":"
		                    "\"lead\"},%s",
		                own);
		make_schedule("team-lead-schedule", "team-lead", "plan", meta,
		        testutil_jsonf("{\"phase\":\"Active\",\"nextRunTime\":"
		                       "\"%s\"}",
		                next_ts),
		        NULL);
		free(meta);
	}
	free(own);
}

/* sympoziumconfig_controller.go Reconcile with spec.gateway enabled (its
 * finalizer sympozium.ai/config-finalizer): reconcileGatewayClass's
 * "sympozium" (label managed-by sympoziumconfig, the envoy
 * controllerName), reconcileGateway's "sympozium-gateway" in the config's
 * namespace (the label, the config's controller reference, the class,
 * the one http listener for routes of the same namespace), the status a
 * gateway controller gives it (Programmed, an address), and updateStatus's
 * Ready phase with status.gateway; then agentrun_controller.go
 * maybeCreateHTTPRoute's "<run>-web" of the Serving run run-web (labels
 * agent-run, instance, component agent-server; the run's controller
 * reference; the gateway as parent; "<instance>.<baseDomain>"; the
 * server Service on 8080). */
static void
fixture_gateway(void)
{
	char uid[64];
	char *own;

	/* kubesim starts with SYS, as a cluster upstream runs in */
	make_in(SYS, &R_CFG,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"SympoziumConfig\",\"metadata\":{\"name\":"
	                       "\"default\",\"finalizers\":[\"sympozium.ai/"
	                       "config-finalizer\"]},\"spec\":{\"gateway\":{"
	                       "\"enabled\":true,\"baseDomain\":"
	                       "\"example.test\"}}}"),
	        testutil_jsonf("{\"phase\":\"Ready\",\"gateway\":{"
	                       "\"ready\":true,\"address\":\"10.1.2.3\","
	                       "\"listenerCount\":1},\"conditions\":[{"
	                       "\"type\":\"Ready\",\"status\":\"True\","
	                       "\"observedGeneration\":1,"
	                       "\"lastTransitionTime\":\"%s\",\"reason\":"
	                       "\"Ready\",\"message\":\"\"}]}",
	                now_ts),
	        uid);
	own = owner("SympoziumConfig", "default", uid);
	make(&R_GC,
	        testutil_jsonf("{\"apiVersion\":\"gateway.networking.k8s.io/"
	                       "v1\",\"kind\":\"GatewayClass\",\"metadata\":"
	                       "{\"name\":\"sympozium\",\"labels\":{"
	                       "\"sympozium.ai/managed-by\":"
	                       "\"sympoziumconfig\"}},\"spec\":{"
	                       "\"controllerName\":\"gateway.envoyproxy.io/"
	                       "gatewayclass-controller\"}}"),
	        NULL, NULL);
	make_in(SYS, &R_GW,
	        testutil_jsonf("{\"apiVersion\":\"gateway.networking.k8s.io/"
	                       "v1\",\"kind\":\"Gateway\",\"metadata\":{"
	                       "\"name\":\"sympozium-gateway\",\"labels\":{"
	                       "\"sympozium.ai/managed-by\":"
	                       "\"sympoziumconfig\"},%s},\"spec\":{"
	                       "\"gatewayClassName\":\"sympozium\","
	                       "\"listeners\":[{\"name\":\"http\","
	                       "\"protocol\":\"HTTP\",\"port\":80,"
	                       "\"allowedRoutes\":{\"namespaces\":{\"from\":"
	                       "\"Same\"}}}]}}",
	                own),
	        testutil_jsonf("{\"addresses\":[{\"type\":\"IPAddress\","
	                       "\"value\":\"10.1.2.3\"}],\"conditions\":["
	                       "{\"type\":\"Accepted\",\"status\":\"True\"},"
	                       "{\"type\":\"Programmed\",\"status\":"
	                       "\"True\"}]}"),
	        NULL);
	free(own);
	own = owner("AgentRun", "run-web", run_web_uid);
	make(&R_ROUTE,
	        testutil_jsonf("{\"apiVersion\":\"gateway.networking.k8s.io/"
	                       "v1\",\"kind\":\"HTTPRoute\",\"metadata\":{"
	                       "\"name\":\"run-web-web\",\"labels\":{"
	                       "\"sympozium.ai/agent-run\":\"run-web\","
	                       "\"sympozium.ai/instance\":\"inst\","
	                       "\"sympozium.ai/component\":\"agent-server\"},"
	                       "%s},\"spec\":{\"parentRefs\":[{\"name\":"
	                       "\"sympozium-gateway\",\"namespace\":"
	                       "\"" SYS "\"}],\"hostnames\":[\"inst."
	                       "example.test\"],\"rules\":[{\"backendRefs\":"
	                       "[{\"name\":\"run-web-server\",\"port\":"
	                       "8080}]}]}}",
	                own),
	        NULL, NULL);
	free(own);
}

/* personapack_controller.go reconcileSharedMemory: the labels of the
 * shared memory PVC, Deployment (and its pods) and Service of pack %1$s */
#define SHM_LABELS                                                            \
	"{\"sympozium.ai/component\":\"shared-memory\","                      \
	"\"sympozium.ai/persona-pack\":\"%1$s\"}"
#define SHM_PROBE(extra)                                                      \
	"{\"httpGet\":{\"path\":\"/health\",\"port\":8080}," extra "}"

/* personapack_controller.go reconcileSharedMemory: PVC
 * "<pack>-shared-memory-db" (RWO, storageSize default 1Gi), Deployment
 * "<pack>-shared-memory" (Recreate, one replica, fsGroup 1000, container
 * memory-server of <registry>/skill-memory:<tag> with the two env vars,
 * the PVC at /data, the three /health probes, requests 50m/64Mi, limits
 * 200m/128Mi) and its Service, all controlled by the pack. */
static void
make_shared_memory(const char *pack, const char *own)
{
	make(&R_PVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":"
	                       "\"PersistentVolumeClaim\",\"metadata\":{"
	                       "\"name\":\"%1$s-shared-memory-db\","
	                       "\"labels\":" SHM_LABELS ",%2$s},\"spec\":{"
	                       "\"accessModes\":[\"ReadWriteOnce\"],"
	                       "\"resources\":{\"requests\":{\"storage\":"
	                       "\"1Gi\"}}}}",
	                pack, own),
	        NULL, NULL);
	make(&R_DEP,
	        testutil_jsonf(
	                "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	                "\"metadata\":{\"name\":\"%1$s-shared-memory\","
	                "\"labels\":" SHM_LABELS ",%2$s},\"spec\":{"
	                "\"replicas\":1,\"strategy\":{\"type\":"
	                "\"Recreate\"},\"selector\":{\"matchLabels\":"
	                "" SHM_LABELS "},\"template\":{\"metadata\":{"
	                "\"labels\":" SHM_LABELS "},\"spec\":{"
	                "\"securityContext\":{\"fsGroup\":1000},"
	                "\"containers\":[{\"name\":\"memory-server\","
	                "\"image\":\"ghcr.io/sympozium-ai/sympozium/"
	                "skill-memory:latest\",\"imagePullPolicy\":"
	                "\"IfNotPresent\",\"ports\":[{\"name\":\"http\","
	                "\"containerPort\":8080,\"protocol\":\"TCP\"}],"
	                "\"env\":[{\"name\":\"MEMORY_DB_PATH\",\"value\":"
	                "\"/data/memory.db\"},{\"name\":\"MEMORY_PORT\","
	                "\"value\":\"8080\"}],\"volumeMounts\":[{\"name\":"
	                "\"memory-db\",\"mountPath\":\"/data\"}],"
	                "\"startupProbe\":" SHM_PROBE(
	                        "\"periodSeconds\":2,"
	                        "\"failureThreshold\":"
	                        "30") ","
	                              "\"readinessProbe"
	                              "\":" SHM_PROBE(
	                                      "\"periodS"
	                                      "econds\":"
	                                      "10") ","
	                                            "\"l"
	                                            "ive"
	                                            "nes"
	                                            "sPr"
	                                            "obe"
	                                            "\""
	                                            ":" SHM_PROBE(
	                                                    "\"initialDelaySec"
	                                                    "onds\":5,"
	                                                    "\"periodSeconds\""
	                                                    ":30") ","
	                                                           "\"resource"
	                                                           "s\":{"
	                                                           "\"requests"
	                                                           "\":{"
	                                                           "\"cpu\":"
	                                                           "\"50m\","
	                                                           "\"memory\""
	                                                           ":\"64Mi\"}"
	                                                           ",\"limits"
	                                                           "\":{"
	                                                           "\"cpu\":"
	                                                           "\"200m\","
	                                                           "\"memory\""
	                                                           ":\"128Mi\""
	                                                           "}}}],"
	                                                           "\"volumes"
	                                                           "\":[{"
	                                                           "\"name\":"
	                                                           "\"memory-"
	                                                           "db\","
	                                                           "\"persiste"
	                                                           "ntVolumeCl"
	                                                           "aim\":{"
	                                                           "\"claimNam"
	                                                           "e\":"
	                                                           "\"%1$s-"
	                                                           "shared-"
	                                                           "memory-"
	                                                           "db\"}}]}}}"
	                                                           "}",
	                pack, own),
	        NULL, NULL);
	make(&R_SVC,
	        testutil_jsonf("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
	                       "\"metadata\":{\"name\":\"%1$s-shared-memory\","
	                       "\"labels\":" SHM_LABELS ",%2$s},\"spec\":{"
	                       "\"selector\":" SHM_LABELS ",\"ports\":[{"
	                       "\"name\":\"http\",\"port\":8080,"
	                       "\"targetPort\":8080,\"protocol\":\"TCP\"}]}}",
	                pack, own),
	        NULL, NULL);
}

/* personapack_controller.go Reconcile with spec.sharedMemory enabled:
 * as fixture_personapack (one persona, no schedule), then
 * reconcileSharedMemory's three objects and status.sharedMemoryReady. */
static void
fixture_personapack_shared(void)
{
	char uid[64], iuid[64];
	char *own, *iown;

	make(&R_PACK,
	        testutil_jsonf("{\"apiVersion\":\"" API "\",\"kind\":"
	                       "\"PersonaPack\",\"metadata\":{\"name\":"
	                       "\"crew\",\"finalizers\":[\"sympozium.ai/"
	                       "personapack-finalizer\"]},\"spec\":{"
	                       "\"enabled\":true,\"sharedMemory\":{"
	                       "\"enabled\":true},\"personas\":[{\"name\":"
	                       "\"scout\",\"systemPrompt\":\"Scout.\"}]}}"),
	        testutil_jsonf("{\"phase\":\"Ready\",\"personaCount\":1,"
	                       "\"installedCount\":1,\"installedPersonas\":[{"
	                       "\"name\":\"scout\",\"instanceName\":"
	                       "\"crew-scout\"}],\"sharedMemoryReady\":true}"),
	        uid);
	own = owner("PersonaPack", "crew", uid);
	make(&R_INST,
	        testutil_jsonf(
	                "{\"apiVersion\":\"" API "\",\"kind\":"
	                "\"SympoziumInstance\",\"metadata\":{\"name\":"
	                "\"crew-scout\",\"labels\":{\"sympozium.ai/"
	                "persona-pack\":\"crew\",\"sympozium.ai/"
	                "persona\":\"scout\"},\"finalizers\":["
	                "\"sympozium.ai/finalizer\"],%s},\"spec\":{"
	                "\"agents\":{\"default\":{\"model\":"
	                "\"gpt-4o\"}},\"memory\":{\"enabled\":true,"
	                "\"maxSizeKB\":256,\"systemPrompt\":\"Scout.\"},"
	                "\"observability\":" DEFAULT_OBS ",\"skills\":["
	                "{\"skillPackRef\":\"memory\"}]}}",
	                own),
	        testutil_jsonf("{\"phase\":\"Running\"}"), iuid);
	iown = owner("SympoziumInstance", "crew-scout", iuid);
	make_memory_children("crew-scout", iown);
	free(iown);
	make_shared_memory("crew", own);
	free(own);
}

static void
fixtures(void)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(now_ts, sizeof(now_ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	make_cron(&tm);
	fixture_skillpacks();
	fixture_policy();
	fixture_instance();
	fixture_run_succeeded();
	fixture_run_failed();
	fixture_run_running();
	fixture_run_postrunning();
	fixture_run_serving();
	fixture_run_sandbox();
	fixture_run_warm_pool();
	fixture_schedule();
	fixture_personapack();
	fixture_personapack_shared();
	fixture_gateway();
}

/* sympoziumctl --json shadow: the reply (caller puts). */
static json_object *
shadow_reply(void)
{
	struct sdproc_ctl r = sdproc_ctl_run(
	        F.dir, NULL, "--socket", F.sock, "--json", "shadow", NULL);
	json_object *o;

	if (r.rc != 0) {
		fail_msg("sympoziumctl --json shadow: exit %d: %s%s", r.rc,
		        r.out, r.err);
	}
	o = jx_parse(r.out, strlen(r.out), 0, NULL, 0);
	if (o == NULL) {
		fail_msg("sympoziumctl --json shadow: not JSON: %s", r.out);
	}
	sdproc_ctl_free(&r);
	return (o);
}

/* The reconciles controller ctl finished (every outcome), from
 * sympoziumctl --json status; its error count into *errors. */
static int64_t
reconciles(const char *ctl, int64_t *errors)
{
	struct sdproc_ctl r = sdproc_ctl_run(
	        F.dir, NULL, "--socket", F.sock, "--json", "status", NULL);
	json_object *o = jx_parse(r.out, strlen(r.out), 0, NULL, 0);
	json_object *a = jx_get(o, "controllers");
	int64_t n = 0;

	*errors = 0;
	for (size_t i = 0; i < jx_array_len(a); i++) {
		json_object *c = json_object_array_get_idx(a, i);
		if (strcmp(jx_get_str(c, "name") ?: "", ctl) != 0) {
			continue;
		}
		json_object_object_foreach(jx_get(c, "reconciles"), k, v)
		{
			n += json_object_get_int64(v);
			*errors += strcmp(k, "error") == 0
			        ? json_object_get_int64(v)
			        : 0;
		}
	}
	json_object_put(o);
	sdproc_ctl_free(&r);
	return (n);
}

/* Every fixture's key was reconciled, none in error: the empty write
 * lists below are the reconcilers' verdict, not a pass not yet made. */
static void
assert_all_reconciled(void)
{
	static const struct {
		const char *ctl;
		int keys;
	} want[] = { { "skillpack", 2 }, { "policy", 1 }, { "instance", 3 },
		{ "agentrun", 8 }, { "schedule", 2 }, { "personapack", 2 },
		{ "config", 1 } };
	int64_t end = ksim_now_ms() + WAIT_MS, err = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		while (reconciles(want[i].ctl, &err) < want[i].keys
		        && ksim_now_ms() < end) {
			ksim_sleep_ms(200);
		}
		if (reconciles(want[i].ctl, &err) < want[i].keys || err != 0) {
			fail_msg("controller %s: %d keys, reconciled %lld, "
			         "errors %lld",
			        want[i].ctl, want[i].keys,
			        (long long)reconciles(want[i].ctl, &err),
			        (long long)err);
		}
	}
}

static int
setup(void **state)
{
	/* no Job or kubelet loop: the Jobs and pods stay as upstream left
	 * them (the run-live pod must not finish under the test) */
	static const char *const ksim_args[]
	        = { "--controllers", "gc,deployment", NULL };

	*state = &F;
	if (optest_start(&F, "test-takeover-all", ksim_args, 10000, WAIT_MS)
	        != 0) {
		return (-1);
	}
	assert_int_equal(optest_apply_upstream_crds(F.a.c), 8);
	assert_int_equal(ksim_apply_crds(F.a.c, GW_DIR), 3);
	assert_int_equal(ksim_apply_crds(F.a.c, SB_DIR), 3);
	assert_int_equal(
	        ksim_api_create(&F.a, &R_NS, NULL, NS, NULL), KAPI_OK);
	fixtures();
	return (0);
}

/* (1) the shadow over upstream's resting state lists nothing. */
static void
test_shadow_no_pending(void **state)
{
	const char *args[] = { "--shadow", "--health-socket", F.sock, NULL };
	json_object *rep;
	char *pending;
	int writes;

	(void)state;
	optest_sd_start(&F, 0, 0, args);
	assert_true(sdproc_log_wait(&F.sd[0], "caches synced", 1, WAIT_MS));
	assert_all_reconciled();
	sleep(2); /* requeues and events from our own reads settle */
	rep = shadow_reply();
	assert_non_null(jx_get(rep, "shadow"));
	pending = xstrdup(json_object_to_json_string(jx_get(rep, "pending")));
	json_object_put(rep);
	writes = ksim_writes_after(F.a.request_log, UA, 0, true);
	/* stopped first, so the next test can start its own */
	optest_sd_sigterm(&F, 0, 15000);
	if (strcmp(pending, "[ ]") != 0 && strcmp(pending, "[]") != 0) {
		fail_msg("upstream's state, yet pending: %s", pending);
	}
	free(pending);
	assert_int_equal(writes, 0);
}

static const char *
check_phase(json_object *o, const void *arg)
{
	if (o == NULL) {
		return ("absent");
	}
	return (strcmp(jx_get_str(o, "status.phase") ?: "", arg) == 0
	                ? NULL
	                : "another phase");
}

/* (2) the operator itself: no write at all (upstream's next reconcile
 * re-sends equal values: the SkillPack ConfigMap Update and status
 * Updates, the policy and instance status; none changes a field), and
 * every object is still there, the runs in their phase. */
static void
test_operator_writes_nothing(void **state)
{
	static const struct {
		const struct kapi_res *r;
		const char *name;
	} kept[] = { { &R_DEP, "inst-channel-slack" },
		{ &R_DEP, "inst-channel-whatsapp" },
		{ &R_PVC, "inst-channel-whatsapp-data" },
		{ &R_PVC, "run-post-workspace" },
		{ &R_JOB, "run-post-postrun" }, { &R_SVC, "run-web-server" },
		{ &R_SEC, "inst-web-proxy-key" }, { &R_CM, "tools" },
		{ &R_INST, "team-lead" }, { &R_SCHED, "team-lead-schedule" },
		{ &R_DEP, "team-lead-memory" }, { &R_RUN, "sched-3" },
		{ &R_INST, "crew-scout" }, { &R_PVC, "crew-shared-memory-db" },
		{ &R_DEP, "crew-shared-memory" },
		{ &R_SVC, "crew-shared-memory" }, { &R_ROUTE, "run-web-web" },
		{ &R_SB, "sb-run-sb" }, { &R_POD, "sb-run-sb" },
		{ &R_SBC, "sbc-run-wp" }, { &R_SB, "sbc-run-wp" } };
	int skip = ksim_log_lines(F.a.request_log);
	const char *args[] = { "--health-socket", F.sock, NULL };

	(void)state;
	optest_sd_start(&F, 1, 0, args);
	assert_true(sdproc_log_wait(&F.sd[1], "caches synced", 1, WAIT_MS));
	assert_all_reconciled();
	ksim_wait_quiet(F.a.request_log, UA, 3000, WAIT_MS);
	assert_int_equal(
	        ksim_writes_after(F.a.request_log, UA, skip, true), 0);
	optest_wait_obj(&F, &R_RUN, NS, "run-live", check_phase, "Running");
	optest_wait_obj(&F, &R_RUN, NS, "run-done", check_phase, "Succeeded");
	optest_wait_obj(&F, &R_RUN, NS, "run-fail", check_phase, "Failed");
	optest_wait_obj(&F, &R_SKP, NS, "tools", check_phase, "Ready");
	optest_wait_obj(&F, &R_INST, NS, "inst", check_phase, "Serving");
	optest_wait_obj(
	        &F, &R_RUN, NS, "run-post", check_phase, "PostRunning");
	optest_wait_obj(&F, &R_RUN, NS, "run-web", check_phase, "Serving");
	optest_wait_obj(&F, &R_RUN, NS, "run-sb", check_phase, "Running");
	optest_wait_obj(&F, &R_RUN, NS, "run-wp", check_phase, "Running");
	optest_wait_obj(
	        &F, &R_JOB, NS, "run-live", optest_check_present, NULL);
	optest_wait_obj(
	        &F, &R_POD, NS, "run-done-p0d", optest_check_present, NULL);
	optest_wait_obj(
	        &F, &R_CM, NS, "run-done-input", optest_check_present, NULL);
	optest_wait_obj(
	        &F, &R_DEP, NS, "inst-memory", optest_check_present, NULL);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		optest_wait_obj(&F, kept[i].r, NS, kept[i].name,
		        optest_check_present, NULL);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shadow_no_pending),
		cmocka_unit_test(test_operator_writes_nothing),
	};

	return (cmocka_run_group_tests(tests, setup, optest_teardown));
}
