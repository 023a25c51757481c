#!/usr/bin/env python3
# Test fixture generator for rtbuild: writes an image SBOM (SPDX 3.0.1 JSON-LD) and, optionally,
# an sbom-cve-check style VEX document, with openembedded-core's own SPDX 3 model (the `oe.spdx30`
# package, put on PYTHONPATH by the test from the upstream snapshot). Nothing here is copied from
# oe-core; it only calls the model's public classes.
#
# usage: make_sbom.py SPEC.json OUT.spdx.json [VEX.spdx.json]
# SPEC: {"kernel_config": {"CONFIG_X": "y", ...}, "packages": {"name": "version", ...},
#        "vex": {"CVE-...": ["affected"|"fixed"|"not_affected", "critical"|"high"|...], ...}}
import json
import sys
from datetime import datetime, timezone

from oe import spdx30

spec = json.load(open(sys.argv[1]))
created = datetime(2026, 1, 1, tzinfo=timezone.utc)
base = "http://spdx.org/spdxdocs/rtbuild-test/"


def new_set(name):
    objset = spdx30.SHACLObjectSet()
    # SPDX 3.0.1: createdBy names Agents (who made the document), the Tool goes in createdUsing
    # (as oe-core's sbom30.py records its own create-spdx tool).
    info = spdx30.CreationInfo(
        _id="_:ci",
        specVersion="3.0.1",
        created=created,
        createdBy=[base + "agent"],
        createdUsing=[base + "tool"],
    )
    agent = spdx30.Organization(_id=base + "agent", name="rtbuild tests", creationInfo=info)
    tool = spdx30.Tool(_id=base + "tool", name="rtbuild-test-fixture", creationInfo=info)
    doc = spdx30.SpdxDocument(_id=base + name, name=name, creationInfo=info)
    objset.add(info)
    objset.add(agent)
    objset.add(tool)
    return objset, doc, info


def write(objset, doc, path):
    doc.rootElement = sorted(o._id for o in objset.objects if isinstance(o, spdx30.Element) and o is not doc)
    objset.add(doc)
    with open(path, "wb") as f:
        spdx30.JSONLDSerializer(indent=2, sort_keys=True).write(objset, f, force_at_graph=True)


objset, doc, info = new_set("image")
packages = {}
for name, version in sorted(spec.get("packages", {}).items()):
    pkg = spdx30.software_Package(
        _id=base + "package-" + name, name=name, software_packageVersion=version, creationInfo=info
    )
    packages[name] = pkg
    objset.add(pkg)
params = [spdx30.DictionaryEntry(key=k, value=v) for k, v in spec.get("kernel_config", {}).items()]
if params:
    objset.add(
        spdx30.build_Build(
            _id=base + "kernel-config",
            creationInfo=info,
            build_buildType="https://openembedded.org/kernel-configuration",
            build_parameter=params,
        )
    )
write(objset, doc, sys.argv[2])

if len(sys.argv) > 3:
    objset, doc, info = new_set("vex")
    kinds = {
        "affected": spdx30.security_VexAffectedVulnAssessmentRelationship,
        "fixed": spdx30.security_VexFixedVulnAssessmentRelationship,
        "not_affected": spdx30.security_VexNotAffectedVulnAssessmentRelationship,
    }
    types = {
        "affected": spdx30.RelationshipType.affects,
        "fixed": spdx30.RelationshipType.fixedIn,
        "not_affected": spdx30.RelationshipType.doesNotAffect,
    }
    kernel = spdx30.software_Package(
        _id=base + "package-linux-qcom-rt", name="linux-qcom-rt", creationInfo=info
    )
    objset.add(kernel)
    for cve, (status, severity) in sorted(spec.get("vex", {}).items()):
        vuln = spdx30.security_Vulnerability(
            _id=base + "vuln-" + cve,
            name=cve,
            creationInfo=info,
            externalIdentifier=[
                spdx30.ExternalIdentifier(
                    externalIdentifierType=spdx30.ExternalIdentifierType.cve, identifier=cve
                )
            ],
        )
        objset.add(vuln)
        extra = {}
        if status == "affected":
            extra["security_actionStatement"] = "Upgrade linux-qcom-rt"
        if status == "not_affected":
            extra["security_justificationType"] = (
                spdx30.security_VexJustificationType.vulnerableCodeNotPresent
            )
        objset.add(
            kinds[status](
                _id=base + "vex-" + cve,
                creationInfo=info,
                relationshipType=types[status],
                from_=vuln,
                to=[kernel],
                **extra,
            )
        )
        objset.add(
            spdx30.security_CvssV3VulnAssessmentRelationship(
                _id=base + "cvss-" + cve,
                creationInfo=info,
                relationshipType=spdx30.RelationshipType.hasAssessmentFor,
                from_=vuln,
                to=[kernel],
                security_score=9.8 if severity == "critical" else 5.0,
                security_severity=getattr(spdx30.security_CvssSeverityType, severity),
                security_vectorString="CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
            )
        )
    write(objset, doc, sys.argv[3])
