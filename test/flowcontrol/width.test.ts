// A request's width in seats (kube's list work estimator): one seat, but a
// LIST (or a watch sending its initial events) one per 100 objects it walks,
// from the counts learned from cluster-wide lists, within 1 and the level's
// maximum.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequestInfo } from '../../lib/api/requestinfo.js';
import { ListedCounts, maxSeatsOf, seatsOf } from '../../gateway/flowcontrol/width.js';

const counts = new ListedCounts();
counts.observe('', 'configmaps', 250);
counts.observe('apps', 'deployments', 5000);
const seats = (url: string, max = 10) => {
  const [path, q = ''] = url.split('?') as [string, string?];
  const query = new URLSearchParams(q);
  return seatsOf(parseRequestInfo('GET', path, query.get('watch') === 'true'), query, counts, max);
};

describe('request width', () => {
  it('is one seat for everything but a LIST or an initial-events watch', () => {
    assert.equal(seats('/api/v1/namespaces/a/configmaps/x'), 1);
    assert.equal(seats('/api/v1/configmaps?watch=true'), 1);
    assert.equal(seats('/version'), 1);
  });

  it('takes a seat per 100 objects a LIST walks, as kube estimates it', () => {
    assert.equal(seats('/api/v1/configmaps'), 3, 'the whole set, from the cache');
    assert.equal(seats('/api/v1/namespaces/a/configmaps'), 3, "the count is the resource's, whatever the namespace");
    assert.equal(seats('/api/v1/configmaps?limit=50'), 1, 'a page from storage: twice the page');
    assert.equal(seats('/api/v1/configmaps?limit=100'), 2);
    assert.equal(seats('/api/v1/configmaps?limit=100&labelSelector=a%3Db'), 4, 'a selector walks everything plus the page');
    assert.equal(seats('/api/v1/configmaps?limit=50&resourceVersion=0'), 3, 'resourceVersion=0: from the cache');
    assert.equal(seats('/api/v1/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan'), 3);
  });

  it("stays within the level's maximum, and is one seat for a resource not counted yet", () => {
    assert.equal(seats('/apis/apps/v1/deployments'), 10);
    assert.equal(seats('/apis/apps/v1/deployments', maxSeatsOf(20, 8)), 3, 'min(10, ceil(NominalCL / handSize))');
    assert.equal(seats('/apis/apps/v1/replicasets'), 1);
    assert.equal(maxSeatsOf(Infinity, 8), 10);
    assert.equal(maxSeatsOf(1, 8), 1);
  });
});
